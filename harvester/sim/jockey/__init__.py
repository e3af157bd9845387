"""Jockey in the simulator (EuroSys'12 §5): true jobs from traces, closed-loop runs, the evaluation.

`python -m harvester.sim.jockey.evaluate --traces ../shared/traces` reproduces
docs/evaluation/jockey.md.
"""
