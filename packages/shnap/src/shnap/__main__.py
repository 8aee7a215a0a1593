from icml26_shared.experiment import main

raise SystemExit(main("shnap._reproduce:EXPERIMENT"))
