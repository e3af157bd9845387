"""Phoenix (paper 003) evaluated in a short-job simulator with worker queues.

cluster.py synthesizes node attributes, synthesis.py the Table II constraints, workload.py
turns the Yahoo short-job traces into jobs, engine.py is the discrete-event core (worker
queues, late binding, probes), policies.py the schedulers (FIFO, Sparrow-C, Eagle-C,
Phoenix), evaluate.py the experiment and report.py its Markdown/PNG (docs/evaluation/phoenix.md).
"""
