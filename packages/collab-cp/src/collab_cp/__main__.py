from icml26_shared.experiment import main

raise SystemExit(main("collab_cp._reproduce:EXPERIMENT"))
