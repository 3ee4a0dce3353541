"""`yeebench config`: ReFrame system files for a site that has none (`config from-slurm`)."""
