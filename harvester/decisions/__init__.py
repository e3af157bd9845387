"""Pure decisions (DESIGN.md principle 2): `decide(ctx) -> list[Action]`.

Decision code never imports rm_client, grpc, requests, time or the store: it receives a frozen
context (now, the cluster snapshot, fitted models, the resolved strategy) and returns data.
"""
