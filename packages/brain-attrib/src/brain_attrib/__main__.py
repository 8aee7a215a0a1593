from icml26_shared.experiment import main

raise SystemExit(main("brain_attrib._reproduce:EXPERIMENT"))
