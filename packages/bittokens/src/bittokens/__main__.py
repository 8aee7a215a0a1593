from icml26_shared.experiment import main

raise SystemExit(main("bittokens._reproduce:EXPERIMENT"))
