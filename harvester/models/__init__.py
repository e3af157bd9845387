"""Pure models (DESIGN.md principle 9): `fit(history) -> Params` and `predict(params, x)`.

Nothing here reads a clock, the store or the network; cold start, safety margins and other
fallbacks that are policy rather than model live with the decisions that use them.
"""
