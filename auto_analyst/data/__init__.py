"""Loading tables and describing them for the agents."""

from auto_analyst.data.description import ColumnInfo, DatasetDescription, TableDescription, describe_tables
from auto_analyst.data.load import LoadedTable, LoadReport, load, load_all, table_name

__all__ = ["ColumnInfo", "DatasetDescription", "TableDescription", "describe_tables",
           "LoadedTable", "LoadReport", "load", "load_all", "table_name"]
