from icml26_shared.experiment import main

raise SystemExit(main("perturbedvae._reproduce:EXPERIMENT"))
