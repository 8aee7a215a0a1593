from icml26_shared.experiment import main

raise SystemExit(main("arm_ebm._reproduce:EXPERIMENT"))
