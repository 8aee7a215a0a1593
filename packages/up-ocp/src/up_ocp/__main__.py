from icml26_shared.experiment import main

raise SystemExit(main("up_ocp._reproduce:EXPERIMENT"))
