from icml26_shared.experiment import main

raise SystemExit(main("rep_unlearn._reproduce:EXPERIMENT"))
