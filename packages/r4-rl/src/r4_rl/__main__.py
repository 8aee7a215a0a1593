from icml26_shared.experiment import main

raise SystemExit(main("r4_rl._reproduce:EXPERIMENT"))
