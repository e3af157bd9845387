"""Morpheus (paper 002) evaluated in the simulator: SLO violations and cluster footprint.

workload.py finds the recurring jobs (Alibaba 2018 daily DAGs, Alibaba 2017 hourly batch jobs),
history.py plays their runs and turns them into history, provenance, SLOs (§4) and skylines (§5)
through the live models, runner.py runs a test period under static provisioning or Morpheus'
reservations (LowCost §6, DRA §7, never worse than static: the live decisions), evaluate.py is
the experiment (with the cluster-size sweep), report.py its tables, results.py reads its results
file and figure.py draws it (`harvester evaluate morpheus`, docs/evaluation/morpheus.md).
"""
