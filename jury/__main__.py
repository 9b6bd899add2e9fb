from jury.cli import main

main()
