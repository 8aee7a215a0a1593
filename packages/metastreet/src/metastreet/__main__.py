from icml26_shared.experiment import main

raise SystemExit(main("metastreet._reproduce:EXPERIMENT"))
