"""Advice: the read side. gRPC for tools and Python clients, HTTP JSON for the Java plug-ins."""
