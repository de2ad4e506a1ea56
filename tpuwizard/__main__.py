from tpuwizard.cli import main

main()
