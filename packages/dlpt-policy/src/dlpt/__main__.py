from icml26_shared.experiment import main

raise SystemExit(main("dlpt._reproduce:EXPERIMENT"))
