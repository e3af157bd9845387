"""RM JSON shapes: frozen models plus ``decode_*`` (RM JSON -> model) and ``encode_*``
(model -> RM JSON) per endpoint. This is the single description of the 3.3.6 wire format,
used by the client to read answers and by the emulator to write them."""
