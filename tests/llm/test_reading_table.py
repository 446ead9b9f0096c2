"""The reading table: natural questions on generated tables and what the offline planner makes of them.

Each row is (table, question, expected[, previous]): the canonical text the planner writes for the
question (checked to read back through the strict parser), ``decline: <words of the reason>`` or
``suggest: <the closest question offered>`` (every decline also says that ``--model`` reads any
phrasing), ``intent: <intent>`` for messages about the conversation, and ``... || part declined`` when
the question was answered in part. ``previous`` is the canonical text of the turn before (follow-ups).
The tables are in tests/llm/reading_tables.py; nothing runs in the sandbox, so the whole table reads
in a few seconds. The rows follow issue 11's items: vocabulary from the data, question forms, task
plugins and their claims, instructions, follow-ups, declines that help, and the conversation.
"""

from __future__ import annotations

import json

import pytest

from auto_analyst.offline.planning import MODEL_HINT, planner
from auto_analyst.offline.request import Request
from tests.llm.reading_tables import descriptions

ROWS = [
    ('shop', 'total sales', 'total of `sales_eur`'),
    ('shop', "What's the total turnover?", 'total of `sales_eur`'),
    ('shop', 'average sales eur by country', 'mean of `sales_eur` by `country`'),
    ('shop', 'mean sales in euros', 'mean of `sales_eur`'),
    ('shop', 'total revenue by country', 'total of `sales_eur` by `country`'),
    ('shop', 'average quantity by country', 'mean of `qty` by `country`'),
    ('shop', 'total qty', 'total of `qty`'),
    ('shop', 'how many items were sold in total', 'total of `qty`'),
    ('shop', 'average discount percentage', 'mean of `discount_pct`'),
    ('shop', 'average discount rate by country', 'mean of `discount_pct` by `country`'),
    ('shop', 'mean discount', 'mean of `discount_pct`'),
    ('shop', 'median sales_eur', 'median of `sales_eur`'),
    ('weather', 'average humidity by station', 'mean of `rel_hum_pct` by `station`'),
    ('weather', 'mean relative humidity', 'mean of `rel_hum_pct`'),
    ('weather', 'average rel hum', 'mean of `rel_hum_pct`'),
    ('weather', 'average temperature', 'mean of `temp_c`'),
    ('weather', 'mean temp in celsius by station', 'mean of `temp_c` by `station`'),
    ('weather', 'maximum wind speed', 'maximum of `wind_kmh`'),
    ('weather', 'average wind', 'mean of `wind_kmh`'),
    ('weather', 'total rainfall', 'total of `precip_mm`'),
    ('weather', 'total precipitation by station', 'total of `precip_mm` by `station`'),
    ('weather', 'how much rain fell in total', 'total of `precip_mm`'),
    ('weather', 'average moisture', 'mean of `rel_hum_pct`'),
    ('weather', 'median temp_c', 'median of `temp_c`'),
    ('cars', 'average mpg by origin', 'mean of `Miles_per_Gallon` by `Origin`'),
    ('cars', 'average fuel economy', 'mean of `Miles_per_Gallon`'),
    ('cars', 'mean miles per gallon by Origin', 'mean of `Miles_per_Gallon` by `Origin`'),
    ('cars', 'average horsepower', 'mean of `Horsepower`'),
    ('cars', 'mean power by origin', 'mean of `Horsepower` by `Origin`'),
    ('cars', 'average weight', 'mean of `Weight_in_lbs`'),
    ('cars', 'mean weight in pounds', 'mean of `Weight_in_lbs`'),
    ('cars', 'average acceleration by cylinders', 'mean of `Acceleration` by `Cylinders`'),
    ('cars', 'what is the average mileage of cars from Japan', "mean of `Miles_per_Gallon` where `Origin` == 'Japan'"),
    ('clinic', 'mean blood pressure by ward', 'mean of `systolic_bp` by `ward`'),
    ('clinic', 'average systolic bp', 'mean of `systolic_bp`'),
    ('clinic', 'average length of stay', 'mean of `stay_days`'),
    ('clinic', 'average stay by ward', 'mean of `stay_days` by `ward`'),
    ('clinic', 'mean age by ward', 'mean of `age` by `ward`'),
    ('clinic', 'median age of patients', 'median of `age`'),
    ('clinic', 'average stay in days', 'mean of `stay_days`'),
    ('macro', 'average real gdp', 'mean of `realgdp`'),
    ('macro', 'mean unemployment', 'mean of `unemp`'),
    ('macro', 'average inflation by year', 'mean of `infl` by `year`'),
    ('macro', 'maximum treasury bill rate', 'maximum of `tbilrate`'),
    ('macro', 'mean unemployment rate', 'mean of `unemp`'),
    ('macro', 'average infl', 'mean of `infl`'),
    ('shop', 'How many customers signed up in 2022?', 'number of distinct of `customer` where `signup_date` in year 2022'),
    ('shop', 'how many orders were placed in 2024', 'count of rows where `order_date` in year 2024'),
    ('shop', 'how many members are there', 'count of rows where `is_member` == true'),
    ('shop', 'average sales of members', 'mean of `sales_eur` where `is_member` == true'),
    ('shop', 'average sales of non-members', 'mean of `sales_eur` where `is_member` == false'),
    ('shop', 'total sales for customers who are not members', 'total of `sales_eur` where `is_member` == false'),
    ('shop', 'how much was spent by members', 'total of `sales_eur` where `is_member` == true'),
    ('shop', 'how many orders were ordered in March 2023', 'count of rows where `order_date` in month 3 and `order_date` in year 2023'),
    ('shop', 'number of signups by country', 'count of `signup_date` by `country`'),
    ('clinic', 'How many patients were admitted in 2023?', 'count of rows where `admitted_on` in year 2023'),
    ('clinic', 'average age of readmitted patients', 'mean of `age` where `readmitted` == true'),
    ('clinic', 'how many patients were not readmitted', 'count of rows where `readmitted` == false'),
    ('clinic', 'what percentage of patients were readmitted', 'percent of `readmitted`, as a percentage'),
    ('clinic', 'share of readmitted patients by ward', 'percent of `readmitted` by `ward`, as a percentage'),
    ('clinic', 'Who is the oldest patient?', 'top 1 rows by `age` with `patient_id`'),
    ('clinic', 'who is the youngest patient', 'bottom 1 rows by `age` with `patient_id`'),
    ('clinic', 'the patient with the longest stay', 'top 1 rows by `stay_days` with `patient_id`'),
    ('weather', 'How many stormy days were there?', 'count of rows where `storm` == true'),
    ('weather', 'Which station is the windiest?', 'which `station` has the highest mean of `wind_kmh`'),
    ('weather', 'What was the hottest day?', 'top 1 rows by `temp_c` with `obs_date`'),
    ('weather', 'the coldest day', 'bottom 1 rows by `temp_c` with `obs_date`'),
    ('weather', 'which station is the most humid', 'which `station` has the highest mean of `rel_hum_pct`'),
    ('weather', 'which station has the least rain', 'which `station` has the lowest total of `precip_mm`'),
    ('weather', 'which station is the rainiest', 'which `station` has the highest total of `precip_mm`'),
    ('cars', "What's the heaviest car?", 'top 1 rows by `Weight_in_lbs` with `Name`'),
    ('cars', 'the lightest car', 'bottom 1 rows by `Weight_in_lbs` with `Name`'),
    ('cars', 'which origin has the heaviest cars on average', 'which `Origin` has the highest mean of `Weight_in_lbs`'),
    ('cars', 'the most powerful car', 'top 1 rows by `Horsepower` with `Name`'),
    ('cars', 'which car is the fastest', "decline: 'fastest'"),
    ('cars', 'the 3 heaviest cars', 'top 3 rows by `Weight_in_lbs` with `Name`'),
    ('shop', 'the most expensive order', 'top 1 rows by `sales_eur` with `order_id`'),
    ('shop', 'the cheapest order', 'bottom 1 rows by `sales_eur` with `order_id`'),
    ('shop', 'the 5 most expensive orders', 'top 5 rows by `sales_eur` with `order_id`'),
    ('cars', 'Which Origin has the most cars?', 'which `Origin` has the highest count of rows'),
    ('cars', 'how many cars are there', 'count of rows'),
    ('cars', 'how many cars per origin', 'count of rows by `Origin`'),
    ('cars', 'number of cars by Cylinders', 'count of rows by `Cylinders`'),
    ('clinic', 'how many patients are there', 'count of rows'),
    ('clinic', 'how many patients per ward', 'count of rows by `ward`'),
    ('clinic', 'Which ward has the most patients?', 'which `ward` has the highest count of rows'),
    ('clinic', 'how many records per ward', 'count of rows by `ward`'),
    ('clinic', 'count rows by ward', 'count of rows by `ward`'),
    ('shop', 'how many orders per country', 'count of rows by `country`'),
    ('shop', 'how many rows are there', 'count of rows'),
    ('shop', 'how many entries per country', 'count of rows by `country`'),
    ('shop', 'how many distinct customers are there', 'number of distinct of `customer`'),
    ('shop', 'how many customers per country', 'number of distinct of `customer` by `country`'),
    ('stocks', 'how many rows per symbol', 'count of rows by `symbol`'),
    ('stocks', 'how many observations are there', 'count of rows'),
    ('stocks', 'average price of AAPL in 2005', "mean of `price` where `symbol` == 'AAPL' and `date` in year 2005"),
    ('stocks', 'mean price of MSFT in 2004 and 2005', "mean of `price` where `symbol` == 'MSFT' and `date` in year 2004 or 2005"),
    ('stocks', 'max price of IBM after 2006', "maximum of `price` where `symbol` == 'IBM' and `date` in years from 2007"),
    ('stocks', 'average price of AAPL between 2004 and 2006', "mean of `price` where `symbol` == 'AAPL' and `date` in years 2004 to 2006"),
    ('stocks', 'average price of AAPL in March 2005', "mean of `price` where `symbol` == 'AAPL' and `date` in month 3 and `date` in year 2005"),
    ('stocks', 'average price for AAPL and MSFT', "mean of `price` where `symbol` == 'AAPL' or 'MSFT'"),
    ('stocks', 'average price of AAPL in 2005 where price > 50', "mean of `price` where `price` > 50 and `symbol` == 'AAPL' and `date` in year 2005"),
    ('shop', 'average sales of Germany in 2024', "mean of `sales_eur` where `country` == 'Germany' and `order_date` in year 2024"),
    ('shop', 'total sales for France and Spain in 2023', "total of `sales_eur` where `country` == 'France' or 'Spain' and `order_date` in year 2023"),
    ('shop', 'average sales of members in Germany', "mean of `sales_eur` where `country` == 'Germany' and `is_member` == true"),
    ('shop', 'number of orders with qty above 5 in Italy', "count of rows where `qty` > 5 and `country` == 'Italy'"),
    ('shop', "mean sales where discount_pct >= 10 and country = 'Spain'", "mean of `sales_eur` where `discount_pct` >= 10 and `country` == 'Spain'"),
    ('shop', 'total sales in the second quarter of 2023', 'total of `sales_eur` where `order_date` in quarter 2 and `order_date` in year 2023'),
    ('shop', 'total sales in Q1 2024', 'total of `sales_eur` where `order_date` in quarter 1 and `order_date` in year 2024'),
    ('shop', 'average sales from March to May 2024', 'mean of `sales_eur` where `order_date` in months 3 to 5 and `order_date` in year 2024'),
    ('shop', 'total sales except Germany', "total of `sales_eur` where `country` != 'Germany'"),
    ('shop', 'mean sales not in France', "mean of `sales_eur` where `country` != 'France'"),
    ('weather', 'mean temp_c by station in July 2024', 'mean of `temp_c` by `station` where `obs_date` in month 7 and `obs_date` in year 2024'),
    ('weather', 'average temperature in Oslo in 2023', "mean of `temp_c` where `station` == 'Oslo' and `obs_date` in year 2023"),
    ('weather', 'total precipitation in Bergen in June', "total of `precip_mm` where `station` == 'Bergen' and `obs_date` in month 6"),
    ('weather', 'average wind speed in Tromso when it is stormy', "mean of `wind_kmh` where `station` == 'Tromso' and `storm` == true"),
    ('weather', 'how many days above 20 degrees', 'count of rows where `temp_c` > 20'),
    ('weather', 'days with humidity below 50 in Oslo', 'decline: which statistic or chart'),
    ('weather', 'average temperature between January and March 2024', 'mean of `temp_c` where `obs_date` in months 1 to 3 and `obs_date` in year 2024'),
    ('cars', 'average horsepower of cars with 8 cylinders', 'mean of `Horsepower` where `Cylinders` == 8'),
    ('cars', 'average weight of cars from Europe with 4 cylinders', "mean of `Weight_in_lbs` where `Cylinders` == 4 and `Origin` == 'Europe'"),
    ('cars', 'how many cars from Japan have more than 100 horsepower', "count of rows where `Horsepower` > 100 and `Origin` == 'Japan'"),
    ('cars', 'mean mpg of cars heavier than 3000', 'mean of `Miles_per_Gallon` where `Weight_in_lbs` > 3000'),
    ('clinic', 'average age of readmitted patients in Cardiology', "mean of `age` where `ward` == 'Cardiology' and `readmitted` == true"),
    ('clinic', 'how many patients older than 65 are in Surgery', "count of rows where `age` > 65 and `ward` == 'Surgery'"),
    ('clinic', 'average stay of patients admitted in 2022 in Oncology', "mean of `stay_days` where `ward` == 'Oncology' and `admitted_on` in year 2022"),
    ('clinic', 'patients with a stay longer than 20 days', 'values of `stay_days` with `patient_id` where `stay_days` > 20'),
    ('shop', 'top 5 orders by sales', 'top 5 rows by `sales_eur` with `order_id`'),
    ('shop', 'the 3 smallest orders by qty', 'bottom 3 rows by `qty` with `order_id`'),
    ('shop', 'bottom 3 orders by sales_eur', 'bottom 3 rows by `sales_eur` with `order_id`'),
    ('clinic', 'top 3 patients by age', 'top 3 rows by `age` with `patient_id`'),
    ('clinic', 'the 5 patients with the longest stay', 'top 5 rows by `stay_days` with `patient_id`'),
    ('clinic', 'which patient has the highest blood pressure', 'top 1 rows by `systolic_bp` with `patient_id`'),
    ('cars', 'top 5 cars by horsepower', 'top 5 rows by `Horsepower` with `Name`'),
    ('cars', 'the 3 cars with the best mpg', 'top 3 rows by `Miles_per_Gallon` with `Name`'),
    ('cars', 'which car has the lowest weight', 'bottom 1 rows by `Weight_in_lbs` with `Name`'),
    ('weather', 'the 5 days with the most rain', 'top 5 rows by `precip_mm` with `obs_date`'),
    ('weather', 'the 3 windiest days', 'top 3 rows by `wind_kmh` with `obs_date`'),
    ('macro', 'the 3 quarters with the highest unemployment', 'top 3 rows by `unemp` with `date`'),
    ('macro', 'top 5 rows by infl', 'top 5 rows by `infl` with `date`'),
    ('cars', 'How many rows are there for each number of Cylinders?', 'count of rows by `Cylinders`'),
    ('cars', 'how many cars for each Origin', 'count of rows by `Origin`'),
    ('cars', 'count of cars per cylinders', 'count of rows by `Cylinders`'),
    ('cars', 'how many cars are there for each value of Cylinders', 'count of rows by `Cylinders`'),
    ('shop', 'how many orders for each country', 'count of rows by `country`'),
    ('shop', 'how many items per country', 'total of `qty` by `country`'),
    ('shop', 'how many orders each customer placed', 'count of rows by `customer`'),
    ('weather', 'how many days per station', 'count of rows by `station`'),
    ('weather', 'how many observations for each station', 'count of rows by `station`'),
    ('macro', 'How many quarters had inflation above 5?', 'count of rows where `infl` > 5'),
    ('macro', 'how many years are there', 'count of rows'),
    ('weather', 'Compare the humidity of Oslo and Bergen', "mean of `rel_hum_pct` by `station` where `station` == 'Oslo' or 'Bergen'"),
    ('weather', 'compare average temperature in Oslo and Tromso', "mean of `temp_c` by `station` where `station` == 'Oslo' or 'Tromso'"),
    ('weather', 'Oslo vs Bergen wind speed', "mean of `wind_kmh` by `station` where `station` == 'Oslo' or 'Bergen'"),
    ('cars', 'Compare the average weight of USA and Japan cars', "mean of `Weight_in_lbs` by `Origin` where `Origin` == 'USA' or 'Japan'"),
    ('cars', 'compare mpg of Europe and Japan', "mean of `Miles_per_Gallon` by `Origin` where `Origin` == 'Europe' or 'Japan'"),
    ('macro', 'Compare average inflation in 1995 and 2005', 'mean of `infl` by year of `date` where `date` in year 1995 or 2005'),
    ('macro', 'compare unemployment and inflation', 'mean of `unemp` and mean of `infl`'),
    ('shop', 'compare total sales of Germany and France', "total of `sales_eur` by `country` where `country` == 'Germany' or 'France'"),
    ('shop', 'compare the sales of members and non-members', 'total of `sales_eur` by `is_member`'),
    ('stocks', 'compare the average price of AAPL and MSFT', "mean of `price` by `symbol` where `symbol` == 'AAPL' or 'MSFT'"),
    ('weather', 'Average temperature by month', 'mean of `temp_c` by month of `obs_date`'),
    ('weather', 'Which month had the most rain?', 'which month of `obs_date` has the highest total of `precip_mm`'),
    ('weather', 'Which calendar month is the coldest on average?', 'which calendar month of `obs_date` has the lowest mean of `temp_c`'),
    ('weather', 'average temperature by month of the year', 'mean of `temp_c` by calendar month of `obs_date`'),
    ('weather', 'which month of the year is the windiest', 'which calendar month of `obs_date` has the highest mean of `wind_kmh`'),
    ('weather', 'monthly total precipitation', 'total of `precip_mm` by month of `obs_date`'),
    ('shop', 'total sales by month', 'total of `sales_eur` by month of `order_date`'),
    ('shop', 'which month had the highest sales', 'which month of `order_date` has the highest total of `sales_eur`'),
    ('shop', 'number of orders by calendar month', 'count of rows by calendar month of `order_date`'),
    ('macro', 'any trends in unemployment?', 'line chart of mean of `unemp` by year of `date`'),
    ('macro', 'what drives unemployment?', 'OLS regression of `unemp` on `year` and `quarter` and `realgdp` and `infl` and `tbilrate`'),
    ('macro', 'how has inflation changed over the years', 'line chart of mean of `infl` by year of `date`'),
    ('weather', 'any trends in the temperature?', 'line chart of mean of `temp_c` by month of `obs_date`'),
    ('weather', 'trend of humidity', 'line chart of mean of `rel_hum_pct` by month of `obs_date`'),
    ('weather', 'any trends in the weather?', "decline: which measure's trend"),
    ('cars', 'what drives mpg?', 'OLS regression of `Miles_per_Gallon` on `Cylinders` and `Horsepower` and `Weight_in_lbs` and `Acceleration`'),
    ('cars', 'what are the main factors of horsepower', 'OLS regression of `Horsepower` on `Miles_per_Gallon` and `Cylinders` and `Weight_in_lbs` and `Acceleration`'),
    ('cars', 'what affects weight', 'OLS regression of `Weight_in_lbs` on `Miles_per_Gallon` and `Cylinders` and `Horsepower` and `Acceleration` and `Origin`'),
    ('shop', 'what drives sales?', 'OLS regression of `sales_eur` on `qty` and `discount_pct`'),
    ('shop', 'any trend in sales', 'line chart of mean of `sales_eur` by month of `order_date`'),
    ('clinic', 'what drives stay_days?', 'OLS regression of `stay_days` on `age` and `systolic_bp`'),
    ('clinic', 'what drives readmission', "decline: 'readmission'"),
    ('clinic', 'Is there a significant difference in age between Cardiology and Surgery?', "Welch t-test of `age` by `ward` for 'Cardiology' and 'Surgery' at alpha 0.05"),
    ('clinic', 'ANOVA of age by ward', 'one-way ANOVA of `age` by `ward` at alpha 0.05'),
    ('clinic', 'Run an ANOVA of stay_days by ward', 'one-way ANOVA of `stay_days` by `ward` at alpha 0.05'),
    ('clinic', 't-test of age between readmitted and not', 'Welch t-test of `age` by `readmitted` at alpha 0.05'),
    ('clinic', 'is age normally distributed', 'normality test of `age` at alpha 0.05'),
    ('clinic', 'chi-square test of ward and readmitted', 'chi-square test of independence of `ward` and `readmitted` at alpha 0.05'),
    ('clinic', 'outliers in age', 'outliers of `age` by 1.5 IQR'),
    ('clinic', 'are there outliers in systolic_bp using the z-score method', 'outliers of `systolic_bp` by z-score above 3'),
    ('clinic', 'mean age after removing outliers', 'mean of `age` after removing outliers of `age` by 1.5 IQR'),
    ('clinic', 'regress stay_days on age', 'OLS regression of `stay_days` on `age`'),
    ('clinic', 'OLS regression of age on stay_days and systolic_bp', 'OLS regression of `age` on `stay_days` and `systolic_bp`'),
    ('clinic', 'predict readmitted from age and stay_days', 'train a logistic regression model predicting `readmitted` from `age` and `stay_days` with the top 10 features'),
    ('clinic', 'train a random forest to predict readmitted', 'train a random forest model predicting `readmitted` from `ward` and `age` and `stay_days` and `systolic_bp` with the top 10 features'),
    ('clinic', 'remove outliers of age and train a model to predict readmitted', 'decline: outlier search or a machine-learning model'),
    ('clinic', 't-test and ANOVA of age by ward', 'decline: ask for an ANOVA'),
    ('clinic', 'is there a significant correlation between age and stay_days', 'correlation between `age` and `stay_days`'),
    ('clinic', 'cluster the patients into 3 groups', 'k-means clustering into 3 clusters of `age` and `stay_days` and `systolic_bp`'),
    ('clinic', 'k-means with k=4 on age and stay_days', 'k-means clustering into 4 clusters of `age` and `stay_days`'),
    ('clinic', 'predict stay_days from age', 'OLS regression of `stay_days` on `age`'),
    ('cars', 'regress Miles_per_Gallon on Horsepower and Weight_in_lbs', 'OLS regression of `Miles_per_Gallon` on `Horsepower` and `Weight_in_lbs`'),
    ('cars', 'predict mpg from weight', 'OLS regression of `Miles_per_Gallon` on `Weight_in_lbs`'),
    ('cars', 'train a linear regression model to predict mpg from weight and acceleration with an 80/20 split', 'train a linear model predicting `Miles_per_Gallon` from `Weight_in_lbs` and `Acceleration` with the top 10 features on a test share of 0.2'),
    ('cars', 'effect of horsepower on mpg', 'OLS regression of `Miles_per_Gallon` on `Horsepower`'),
    ('cars', 'is there a significant difference in mpg between USA and Japan', "Welch t-test of `Miles_per_Gallon` by `Origin` for 'USA' and 'Japan' at alpha 0.05"),
    ('cars', 'use machine learning to predict Origin', 'train a logistic regression model predicting `Origin` from `Miles_per_Gallon` and `Cylinders` and `Horsepower` and `Weight_in_lbs` and `Acceleration` with the top 10 features'),
    ('cars', 'Create a new column called power_weight as the ratio of Horsepower to Weight_in_lbs', 'new column `power_weight` = `Horsepower` / `Weight_in_lbs`'),
    ('cars', 'outliers of horsepower by z-score above 2.5', 'outliers of `Horsepower` by z-score above 2.5'),
    ('cars', 'median mpg excluding outliers', 'median of `Miles_per_Gallon` after removing outliers of `Miles_per_Gallon` by 1.5 IQR'),
    ('shop', 'is sales normally distributed', 'normality test of `sales_eur` at alpha 0.05'),
    ('shop', 'ANOVA of sales by country', 'one-way ANOVA of `sales_eur` by `country` at alpha 0.05'),
    ('shop', 'outliers in sales_eur and qty', 'outliers of `sales_eur` and `qty` by 1.5 IQR'),
    ('shop', 'test whether sales differ between members and non-members', 'Welch t-test of `sales_eur` by `is_member` at alpha 0.05'),
    ('shop', 'Calculate the mean sales_eur. Round the result to two decimal places.', 'mean of `sales_eur`, rounded to 2 decimals'),
    ('shop', 'Use pandas to compute the median qty.', 'median of `qty`'),
    ('shop', 'Question: what is the total sales_eur?', 'total of `sales_eur`'),
    ('shop', 'Calculate the mean of sales_eur, ignoring missing values.', 'mean of `sales_eur`'),
    ('shop', 'Calculate the population standard deviation of sales_eur.', 'population standard deviation of `sales_eur`'),
    ('shop', 'Calculate the standard deviation of qty using the population formula, not the sample formula.', 'population standard deviation of `qty`'),
    ('shop', 'Compute the mean sales_eur without applying any transformations or filters to the data.', 'mean of `sales_eur`'),
    ('shop', 'Count the rows, ignoring rows with missing values.', 'decline: changes a count of rows'),
    ('shop', 'Fill missing values of sales_eur with the mean and then compute the average', 'suggest: missing values of `sales_eur`'),
    ('shop', 'Calculate the mean and standard deviation of sales_eur. Use the built-in functions of pandas. Round to 2 decimal places.', 'mean of `sales_eur` and standard deviation of `sales_eur`, rounded to 2 decimals'),
    ('shop', 'What is the skewness of sales_eur?', 'skewness of `sales_eur`'),
    ('shop', 'Calculate the kurtosis of qty.', 'kurtosis of `qty`'),
    ('shop', 'What is the range of sales_eur?', 'range of `sales_eur`'),
    ('shop', 'Calculate the Spearman correlation between sales_eur and qty.', 'Spearman correlation between `sales_eur` and `qty`'),
    ('shop', 'Calculate the Pearson correlation coefficient between sales_eur and qty. Ignore rows with missing values in these two columns.', 'correlation between `sales_eur` and `qty`'),
    ('shop', 'Apply a log transformation to sales_eur and compute its mean', 'suggest: mean of `sales_eur`'),
    ('weather', 'Identify and remove any outliers in the wind_kmh column using the Z-score method with a Z-score threshold of 3. Provide the number of removed outliers.', 'outliers of `wind_kmh` by z-score above 3'),
    ('weather', 'Identify outliers in precip_mm using the interquartile range (IQR) method. An outlier is defined as a value that is below Q1 - 1.5*IQR or above Q3 + 1.5*IQR.', 'outliers of `precip_mm` by 1.5 IQR'),
    ('weather', 'Remove outliers in temp_c with the Z-score method, where Z is defined as (value - mean) / standard deviation, then calculate the new mean and standard deviation of temp_c.', 'mean and standard deviation of `temp_c` after removing outliers of `temp_c` by z-score above 3'),
    ('weather', 'Check if temp_c adheres to a normal distribution using the Shapiro-Wilk test.', 'normality test of `temp_c` at alpha 0.05'),
    ('weather', 'Use the Kolmogorov-Smirnov test to check if temp_c is normal.', 'suggest: normality test of `temp_c` at alpha 0.05'),
    ('shop', 'What is the customer satisfaction by country?', "decline: 'satisfaction'"),
    ('shop', 'average profit by country', "decline: 'profit'"),
    ('shop', 'Who will win the election?', "decline: 'win', 'election'"),
    ('shop', 'What is the weather like in Lyon?', "decline: 'weather'"),
    ('shop', 'sort the countries in alphabetical order', "decline: 'alphabetical'"),
    ('shop', 'average sales of the best customers', "decline: 'best customers' are measured by"),
    ('shop', 'Is the newest version better?', "decline: 'newest', 'version', 'better'"),
    ('shop', 'predict the future', "decline: 'future'"),
    ('weather', 'average temperatur by staton', 'mean of `temp_c` by `station`'),
    ('weather', 'mean humidty in Oslo', "mean of `rel_hum_pct` where `station` == 'Oslo'"),
    ('weather', 'average pressure by station', "decline: 'pressure'"),
    ('weather', 'what is the mean snow depth', 'suggest: mean of `precip_mm`'),
    ('cars', 'average price by origin', "decline: 'price'"),
    ('cars', 'which car is the most reliable', "decline: 'reliable'"),
    ('cars', 'mean torque by cylinders', "decline: 'torque'"),
    ('weather', 'now only July 2024', 'mean of `temp_c` by `station` where `obs_date` in month 7 and `obs_date` in year 2024', 'mean of `temp_c` by `station`'),
    ('weather', 'same for humidity', 'mean of `rel_hum_pct` by `station`', 'mean of `temp_c` by `station`'),
    ('weather', 'which of those is the highest?', 'which `station` has the highest mean of `temp_c`', 'mean of `temp_c` by `station`'),
    ('weather', 'plot that', 'bar chart of mean of `temp_c` by `station`', 'mean of `temp_c` by `station`'),
    ('weather', 'and the median?', 'median of `temp_c` by `station`', 'mean of `temp_c` by `station`'),
    ('weather', 'what about Oslo', "mean of `temp_c` by `station` where `station` == 'Oslo'", 'mean of `temp_c` by `station`'),
    ('weather', 'now by month', 'mean of `temp_c` by `station` by month of `obs_date`', 'mean of `temp_c` by `station`'),
    ('weather', 'only 2023', 'mean of `temp_c` by `station` where `obs_date` in year 2023', 'mean of `temp_c` by `station`'),
    ('shop', 'those three: average discount?', 'mean of `discount_pct` by `country` where `country` among the top 3 by total of `sales_eur`', 'top 3 `country` by total of `sales_eur`'),
    ('shop', 'the top one: how many orders?', 'count of rows by `country` where `country` among the top 1 by total of `sales_eur`', 'top 3 `country` by total of `sales_eur`'),
    ('shop', 'plot that', 'bar chart of total of `sales_eur` by `country` where `country` among the top 3 by total of `sales_eur`', 'top 3 `country` by total of `sales_eur`'),
    # a top N of a column of its own is a new ranking, not a selection of the previous result
    ('shop', 'top 2 countries by total qty', 'top 2 `country` by total of `qty`', 'mean of `sales_eur` by `country`'),
    ('shop', 'same for qty', 'top 3 `country` by total of `qty`', 'top 3 `country` by total of `sales_eur`'),
    ('shop', 'which of those is the lowest?', 'which `country` has the lowest total of `sales_eur` where `country` among the top 3 by total of `sales_eur`', 'top 3 `country` by total of `sales_eur`'),
    ('shop', 'the top one', 'total of `sales_eur` by `country` where `country` among the top 1 by total of `sales_eur`', 'which `country` has the highest total of `sales_eur`'),
    ('shop', 'now only 2024', 'which `country` has the highest total of `sales_eur` where `order_date` in year 2024', 'which `country` has the highest total of `sales_eur`'),
    ('weather', 'same for wind', 'histogram of `wind_kmh`', 'histogram of `temp_c`'),
    ('weather', 'now only Oslo', "histogram of `temp_c` where `station` == 'Oslo'", 'histogram of `temp_c`'),
    ('cars', 'now only for Japan', "scatter plot of `Horsepower` against `Miles_per_Gallon` where `Origin` == 'Japan'", 'scatter plot of `Horsepower` against `Miles_per_Gallon`'),
    ('cars', 'same for Europe', "scatter plot of `Horsepower` against `Miles_per_Gallon` where `Origin` == 'Europe'", 'scatter plot of `Horsepower` against `Miles_per_Gallon`'),
    ('clinic', 'plot that', 'scatter plot of `age` against `stay_days`', 'correlation between `age` and `stay_days`'),
    ('clinic', 'now for Surgery', "correlation between `age` and `stay_days` where `ward` == 'Surgery'", 'correlation between `age` and `stay_days`'),
    ('stocks', 'same for MSFT', "mean of `price` where `symbol` == 'MSFT'", "mean of `price` where `symbol` == 'AAPL'"),
    ('stocks', 'and in 2005?', "mean of `price` where `symbol` == 'AAPL' and `date` in year 2005", "mean of `price` where `symbol` == 'AAPL'"),
    ('stocks', 'now the maximum', "maximum of `price` where `symbol` == 'AAPL'", "mean of `price` where `symbol` == 'AAPL'"),
    ('cars', 'plot that', 'bar chart of count of rows by `Origin`', 'count of rows by `Origin`'),
    ('cars', 'as a pie chart', 'pie chart of count of rows by `Origin`', 'count of rows by `Origin`'),
    ('cars', 'now only 8 cylinders', 'count of rows by `Origin` where `Cylinders` == 8', 'count of rows by `Origin`'),
    ('clinic', 'plot that', 'bar chart of count of rows by `ward`', 'value counts of `ward`'),
    ('macro', 'now only after 2000', 'line chart of mean of `unemp` by year of `date` where `date` in years from 2001', 'line chart of mean of `unemp` by year of `date`'),
    ('macro', 'same for inflation', 'line chart of mean of `infl` by year of `date`', 'line chart of mean of `unemp` by year of `date`'),
    ('shop', 'now for France', "total of `sales_eur` by month of `order_date` where `country` == 'France'", 'total of `sales_eur` by month of `order_date`'),
    ('shop', 'what about members', 'total of `sales_eur` by month of `order_date` where `is_member` == true', 'total of `sales_eur` by month of `order_date`'),
    ('weather', 'mean temp_c by station in July 2024 for the sunny places', 'suggest: mean of `temp_c` by `station` where `obs_date` in month 7 and `obs_date` in year 2024'),
    ('cars', 'average mpg of cars with big engines by origin', 'suggest: mean of `Miles_per_Gallon` by `Origin`'),
    ('clinic', 'average age of sick patients by ward', 'suggest: mean of `age` by `ward`'),
    ('macro', 'average unemployment in recessions', 'suggest: mean of `unemp`'),
    ('stocks', 'average price of AAPL stock in 2005', "mean of `price` where `symbol` == 'AAPL' and `date` in year 2005"),
    ('shop', 'keep it short from now on', 'intent: config_change'),
    ('shop', 'answer in one sentence from now on', 'intent: config_change'),
    ('shop', 'be more formal', 'intent: config_change'),
    ('shop', 'use bullet points', 'intent: config_change'),
    ('shop', 'explain it to a beginner', 'intent: config_change'),
    ('shop', 'talk to me like a manager', 'intent: config_change'),
    ('shop', 'less jargon please', 'intent: config_change'),
    ('shop', 'give me more detail from now on', 'intent: config_change'),
    ('shop', 'remind me what the total for Germany was', 'intent: memory_query'),
    ('shop', 'what did we find earlier about sales?', 'intent: memory_query'),
    ('shop', 'what was the average discount again?', 'intent: memory_query'),
    # how a normality test's p-value is read: the level it states holds; the reverse rule declines; formats
    ('weather', 'Is temp_c normally distributed? If the p-value is less than 0.01, consider the data to be '
                'non-normally distributed. Otherwise, consider it to be normally distributed.',
     'normality test of `temp_c` at alpha 0.01'),
    ('weather', 'Is temp_c normally distributed? Accept the null hypothesis that the data is normally distributed if '
                'the p-value is greater than 0.1, and reject it otherwise.', 'normality test of `temp_c` at alpha 0.1'),
    ('weather', 'Is temp_c normally distributed? If the p-value is less than 0.05, the data is normally distributed.',
     'decline: the other way round from the usual rule'),
    ('weather', 'Is temp_c normally distributed? @normality_status[status] where "status" is "Normal" or "Not Normal"',
     'normality test of `temp_c` at alpha 0.05'),
    ('weather', 'Is temp_c normally distributed? @ks_p_value[p] @normality_status[status] where "status" is "Normal" '
                'or "Not Normal"', 'decline: another normality test'),
    ('clinic', 'Is systolic_bp normally distributed? Exclude the patient with a missing value of systolic_bp in your '
               'calculations.', 'normality test of `systolic_bp` at alpha 0.05'),
    ('clinic', 'mean age. Exclude the patients with a missing age.', 'mean of `age`'),
    # questions about findings of earlier sessions (the facts memory)
    ('shop', 'what do we know about Germany?', 'intent: memory_query'),
    ('shop', 'what did we find last week about discounts?', 'intent: memory_query'),
    ('shop', 'is the total we found yesterday for Germany higher than for France?', 'intent: memory_query'),
    ('shop', 'recap what we have found so far', 'intent: memory_query'),
    ('shop', 'load sales2.csv', 'intent: new_data'),
    ('shop', 'help', 'intent: qa'),

    # constraint sentences (DABench style): tools, keeping the data as is, definitions, interpretation rules
    ('shop', "Calculate the mean of sales_eur using the built-in functions of Python's pandas library.", 'mean of `sales_eur`'),
    ('shop', 'What is the median qty? Do not remove any outliers or modify the data prior to calculation.', 'median of `qty`'),
    ('shop', 'Total qty. Use all available data points for the computation of the total.', 'total of `qty`'),
    ('cars', 'Calculate the Pearson correlation coefficient to assess the strength and direction of the linear '
             'relationship between weight and horsepower.', 'correlation between `Weight_in_lbs` and `Horsepower`'),
    ('cars', 'What is the correlation between weight and horsepower? If the coefficient is close to 1, it means '
             'there is a strong correlation.', 'correlation between `Weight_in_lbs` and `Horsepower`'),
    ('cars', "Calculate the Pearson's correlation coefficient (r), a statistical measure that calculates the strength "
             "of the relationship between two variables, between mpg and acceleration.",
     'correlation between `Miles_per_Gallon` and `Acceleration`'),
    ('clinic', 'Calculate the mean (average) age as the sum of all values divided by the total number of observations.',
     'mean of `age`'),
    ('shop', 'What is the mean discount? Calculate the mean of discount_pct. Round the result to 2 decimal places.',
     'mean of `discount_pct`, rounded to 2 decimals'),
    ('shop', 'Mean sales by country. Make sure to round the mean sales of each country to 1 decimal place.',
     'mean of `sales_eur` by `country`, rounded to 1 decimals'),
    ('clinic', 'Find the patient with the highest systolic bp. In the case multiple patients have the same highest '
               'value, list all of them.', 'top 1 rows by `systolic_bp` with `patient_id`'),
    # restated and refining parts
    ('shop', 'Calculate the mean and standard deviation of qty. Calculate the standard deviation using the population '
             'formula, not the sample formula.', 'mean of `qty` and population standard deviation of `qty`'),
    ('shop', 'Mean and standard deviation of qty. The population standard deviation should be calculated.',
     'mean of `qty` and population standard deviation of `qty`'),
    ('shop', 'sample standard deviation of sales', 'sample standard deviation of `sales_eur`'),
    ('clinic', 'What is the mean age? Do not include the patients with a missing age in your calculation.', 'mean of `age`'),
    ('clinic', 'Consider only the patients who have a recorded age. What is their mean age?', 'mean of `age`'),
    ('shop', 'Create a new column called net by subtracting discount_pct from sales_eur. What is the mean net?',
     'new column `net` = `sales_eur` - `discount_pct`; mean of `net`'),
    ('shop', "Create a new column called net as the difference of sales_eur and discount_pct. Create the 'net' column "
             "by subtracting discount_pct from sales_eur.", 'new column `net` = `sales_eur` - `discount_pct`'),
    ('shop', 'Perform a distribution analysis on sales_eur by country. Calculate the mean sales for each country. '
             'Interpret the results.', 'mean of `sales_eur` by `country`'),
    ('shop', "What is the average of the 'qty' values?", 'mean of `qty`'),
    ('cars', 'For the "average horsepower", calculate it using the arithmetic mean formula.', 'mean of `Horsepower`'),
    # outlier searches: a threshold stated later, z-scores without one (declined in an answer format)
    ('weather', 'Remove outliers of temp_c using the z-score method. Then calculate the mean temp_c after removing '
                'the outliers. Consider values with a z-score greater than 2.5 or less than -2.5 outliers.',
     'mean of `temp_c` after removing outliers of `temp_c` by z-score above 2.5'),
    ('weather', 'How many outliers does wind_kmh have by the z-score method?', 'outliers of `wind_kmh` by z-score above 3'),
    ('weather', 'How many outliers does wind_kmh have by the z-score method? @n_outliers[count]',
     'decline: no single standard threshold'),
    ('weather', 'Count the outliers of wind_kmh that fall more than 1.5 times the interquartile range above the third '
                'quartile or below the first quartile.', 'outliers of `wind_kmh` by 1.5 IQR'),
    # open questions: a stated default analysis
    ('shop', 'tell me about sales', 'summary statistics of `sales_eur`'),
    ('shop', 'what can you tell me about the countries?', 'value counts of `country`'),
    ('shop', 'what can you tell me about sales by country?', 'mean of `sales_eur` by `country`'),
    ('weather', 'tell me about the data', 'summary statistics of all columns'),
    ('clinic', 'explore stay_days in 2023', 'summary statistics of `stay_days` where `admitted_on` in year 2023'),
    # a column named by an English word; Python's statistics module on missing values
    ('sensors', 'mean RH at site North', "mean of `RH` where `site` == 'North'"),
    ('sensors', 'average AT by site', 'mean of `AT` by `site`'),
    ('sensors', "What is the median of 'AT' using the functions of Python's statistics module?",
     'decline: not defined on missing values'),
    ('sensors', "What is the median of 'AT' using the functions of Python's statistics module, ignoring missing values?",
     'median of `AT`'),
    # offline2: an unread part that restricts the rows declines the whole question; an opening 'among/for ...,'
    # is read with the question it restricts
    ('cars', 'among red cars with weight above 3000, what is the mean mpg?', "decline: 'red'"),
    ('cars', 'Consider only red cars with weight above 3000. What is the mean mpg?', 'decline: restricts the rows'),
    ('cars', 'Among cars from Japan with weight above 3000, what is the mean mpg?',
     "mean of `Miles_per_Gallon` where `Weight_in_lbs` > 3000 and `Origin` == 'Japan'"),
    ('cars', 'For cars from Japan, what is the mean mpg?', "mean of `Miles_per_Gallon` where `Origin` == 'Japan'"),
    ('cars', 'For each origin, what is the mean mpg?', 'mean of `Miles_per_Gallon` by `Origin`'),
    ('cars', 'among cars from Europe, how many are there?', "count of rows where `Origin` == 'Europe'"),
    ('staff', 'What is the average salary? Only for remote workers.', 'decline: restricts the rows'),
    ('staff', 'What is the average salary by department? Excluding interns.', 'decline: restricts the rows'),
    ('staff', 'average salary of Sales staff hired before 2018',
     "mean of `salary` where `department` == 'Sales' and `hired_on` in years up to 2017"),
    ('staff', 'now excluding Sales', "mean of `salary` by `department` where `department` != 'Sales'",
     'mean of `salary` by `department`'),
    ('staff', 'the median salary among engineers', "decline: 'engineers'"),
    # a value in its plural is that value, even when the lexicon knows the noun as a name of rows
    ('roles', 'the median fee among students', "median of `fee` where `role` == 'student'"),
    ('roles', 'how many visitors are there?', "count of rows where `role` == 'visitor'"),
    ('roles', 'mean fee of members', "mean of `fee` where `role` == 'member'"),
    ('staff', 'the mean salary for interns hired after 2018', "decline: 'interns'"),
    ('staff', 'mean salary of managers in Engineering', "decline: 'managers'"),
    ('staff', 'the median salary in Engineering', "median of `salary` where `department` == 'Engineering'"),
    ('clinic', 'the median age among surgeons', "decline: 'surgeons'"),
    ('clinic', 'the median age among patients in Surgery', "median of `age` where `ward` == 'Surgery'"),
    ('shop', 'total sales among premium customers in 2023', "decline: 'premium'"),
    # offline2: negation is read as != (or declines)
    ('staff', 'mean salary where department is not Sales', "mean of `salary` where `department` != 'Sales'"),
    ('staff', 'mean salary for departments other than Sales', "mean of `salary` where `department` != 'Sales'"),
    ('staff', 'how many rows are not Sales', "count of rows where `department` != 'Sales'"),
    ('staff', "how many employees aren't in Sales", "count of rows where `department` != 'Sales'"),
    ('products', "mean price where brand isn't Acme", "mean of `price` where `brand` != 'Acme'"),
    ('products', 'how many products are not Acme', "count of rows where `brand` != 'Acme'"),
    ('products', 'mean price for brands other than Acme', "mean of `price` where `brand` != 'Acme'"),
    ('cars', 'how many cars have cylinders not equal to 4', 'count of rows where `Cylinders` != 4'),
    ('cars', 'mean mpg where cylinders is not 4', 'mean of `Miles_per_Gallon` where `Cylinders` != 4'),
    ('cars', "mean mpg where Origin is not 'USA'", "mean of `Miles_per_Gallon` where `Origin` != 'USA'"),
    ('cars', 'mean mpg where origin is not USA or Japan',
     "mean of `Miles_per_Gallon` where `Origin` != 'USA' and `Origin` != 'Japan'"),
    ('shop', 'total sales excluding Germany and France',
     "total of `sales_eur` where `country` != 'Germany' and `country` != 'France'"),
    ('cars', 'mean mpg for cars other than those from Japan', "decline: 'other than' applies to"),
    ('clinic', 'mean age except for ward Surgery', "decline: 'except' applies to"),
    # offline2: N rows named by a row noun are N rows, with the columns asked
    ('cars', 'the 5 cars with the highest horsepower and show their origin',
     'top 5 rows by `Horsepower` with `Name` and `Origin`'),
    ('products', 'the 5 products with the highest price and show their brand', 'top 5 rows by `price` with `model` and `brand`'),
    ('products', 'the 3 rows with the lowest weight', 'bottom 3 rows by `weight_kg` with `model`'),
    ('products', 'top 3 brands by mean price', 'top 3 `brand` by mean of `price`'),
    ('products', 'show the first 5 rows', 'decline: Say which column to rank by'),
    # offline2: month + year on both sides is one range of dates
    ('stocks', 'mean price between March 2004 and June 2006', "mean of `price` where `date` between '2004-03-01' and '2006-06-30'"),
    ('stocks', 'mean price from Jan 2004 to Dec 2004', "mean of `price` where `date` between '2004-01-01' and '2004-12-31'"),
    ('stocks', 'mean price of AAPL between March 2004 and June 2006',
     "mean of `price` where `symbol` == 'AAPL' and `date` between '2004-03-01' and '2006-06-30'"),
    ('stocks', 'mean price between June 2006 and March 2004', 'decline: ends before it starts'),
    ('stocks', 'mean price between March and June', 'mean of `price` where `date` in months 3 to 6'),
    # offline2: how many X have <condition> is a count, never a list of every X
    ('nations', 'how many countries have population greater than 50', 'number of distinct of `country` where `population` > 50'),
    ('nations', 'count the countries with population above 50', 'number of distinct of `country` where `population` > 50'),
    ('products', 'how many brands have price greater than 50', 'number of distinct of `brand` where `price` > 50'),
    # offline2: show/plot/draw the distribution is a chart; describing it stays statistics
    ('products', 'show the distribution of price', 'histogram of `price`'),
    ('products', 'show me the price distribution', 'histogram of `price`'),
    ('products', 'display the distribution of brand', 'bar chart of count of rows by `brand`'),
    ('products', 'show the distribution of price by brand', 'box plot of `price` by `brand`'),
    ('products', 'describe the distribution of price', 'summary statistics of `price`'),
    ('cars', 'plot the distribution of mpg', 'histogram of `Miles_per_Gallon`'),
    # offline2: spelled numbers after a comparison
    ('products', 'how many products cost over twenty', 'count of rows where `price` > 20'),
    ('cars', 'how many cars have horsepower above one hundred and fifty', 'count of rows where `Horsepower` > 150'),
    ('cars', 'mean mpg of cars with weight over three thousand', 'mean of `Miles_per_Gallon` where `Weight_in_lbs` > 3000'),
    ('cars', 'average mpg for cars with horsepower between eighty and one hundred twenty',
     'mean of `Miles_per_Gallon` where `Horsepower` between 80 and 120'),
]


@pytest.fixture(scope="module")
def tables():
    return descriptions()


def read(tables, table: str, question: str, previous: str | None = None) -> tuple[str, str]:
    """(what the planner wrote, the decline reason) for ``question`` on ``table``."""
    memory = json.dumps({"turns": [{"standalone_question": previous}]}) if previous else "{}"
    prompt = Request(inputs={
        "goal": question, "dataset_description": tables[table].to_prompt(), "short_term_memory": memory})
    out = planner(prompt)
    if out["intent"] != "analysis":
        return "intent: " + out["intent"], ""
    if out["plan"]:
        return out["standalone_question"] + (" || part declined" if out["decline_reason"] else ""), out["decline_reason"]
    return "", out["decline_reason"]


def check(tables, row) -> str:
    """'' when ``row`` reads as expected, else what went wrong."""
    table, question, expected = row[:3]
    previous = row[3] if len(row) > 3 else None
    got, reason = read(tables, table, question, previous)
    if expected.startswith(("decline: ", "suggest: ")):
        kind, words = expected.split(": ", 1)
        if got:
            return f"wrote {got!r}, expected {expected!r}"
        if MODEL_HINT not in reason:  # every decline says a language model reads any phrasing
            return f"decline without the --model hint: {reason!r}"
        wanted = f"Did you mean: {words}?" if kind == "suggest" else words
        return "" if wanted in reason else f"reason {reason!r} lacks {wanted!r}"
    return "" if got == expected else f"wrote {got!r} (reason {reason!r}), expected {expected!r}"


TABLES = sorted({r[0] for r in ROWS})


# One test per table (not per row): the rows read in well under a second, and a per-row test would
# spend most of the time in fixtures. A failure lists every row of the table that read differently.
@pytest.mark.parametrize("table", TABLES)
def test_reading_table(tables, table):
    failures = [f"{row[1]!r}: {why}" for row in ROWS if row[0] == table and (why := check(tables, row))]
    assert not failures, "\n".join(failures)


# offline2: several tables, some named by ordinary words: a name wins only when the question's other words fit
# its table (the active one otherwise)
TABLES_ROWS = [
    ("orders", "total amount", "orders", "total of `amount`"),
    ("total", "total amount", "orders", "total of `amount`"),
    ("total", "total amount by city", "orders", "total of `amount` by `city`"),
    ("orders", "total revenue", "total", "total of `revenue`"),
    ("orders", "mean score in first", "first", "mean of `score`"),
    ("orders", "mean level in data", "data", "mean of `level`"),
    ("orders", "how many rows are in the data", "orders", "count of rows"),
    ("orders", "how many rows in total", "orders", "count of rows"),
    ("total", "how many rows in total", "total", "count of rows"),
    ("orders", "mean amount in the data", "orders", "mean of `amount`"),
]


@pytest.mark.parametrize("active", ["orders", "total"])
def test_a_table_named_by_an_ordinary_word_does_not_take_over(active):
    import numpy as np
    import pandas as pd

    from auto_analyst.data.description import describe_tables
    from auto_analyst.offline.canonical import render
    from auto_analyst.offline.reader import read_question

    r = np.random.default_rng(0)
    frames = {"total": pd.DataFrame({"region": r.choice(["N", "S"], 20), "revenue": r.uniform(1, 9, 20)}),
              "orders": pd.DataFrame({"order_id": range(30), "amount": r.uniform(1, 9, 30),
                                      "city": r.choice(["Paris", "Rome"], 30)}),
              "first": pd.DataFrame({"name": [f"n{k}" for k in range(10)], "score": r.uniform(0, 1, 10)}),
              "data": pd.DataFrame({"site": r.choice(["A", "B"], 10), "level": r.uniform(0, 1, 10)})}
    desc = describe_tables(frames, active=active)
    wrong = []
    for on, question, table, text in TABLES_ROWS:
        if on != active:
            continue
        got = [(s.table, render(s)) for s in read_question(question, desc)]
        if got != [(table, text)]:
            wrong.append(f"{question!r}: {got}, expected {[(table, text)]}")
    assert not wrong, "\n".join(wrong)


def test_the_table_covers_every_item_of_the_issue():
    kinds = [r[2].split(":")[0] for r in ROWS]
    assert len(ROWS) >= 300
    assert kinds.count("decline") >= 15 and kinds.count("suggest") >= 5 and kinds.count("intent") >= 10
    assert sum(1 for r in ROWS if len(r) > 3) >= 30  # follow-ups
