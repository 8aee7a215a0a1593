from icml26_shared.experiment import main

raise SystemExit(main("rsa_cp._reproduce:EXPERIMENT"))
