from isrlab.cli import main

main()
