from auto_analyst.cli import main

main()
