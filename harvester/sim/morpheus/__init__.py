"""Morpheus (paper 002) evaluated in the simulator: SLO violations and cluster footprint.

workload.py finds the daily recurring jobs of the Alibaba 2018 DAG sample, history.py plays
their runs and turns them into history, provenance, SLOs (§4) and skylines (§5) through the
live models, runner.py runs a test day under static provisioning or Morpheus' reservations
(LowCost §6, DRA §7: the live decisions), evaluate.py is the experiment and report.py its
tables (`harvester evaluate morpheus`, docs/evaluation/morpheus.md).
"""
