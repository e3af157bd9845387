"""How Harvester reaches the ResourceManager from its settings (import-light: rm_client only).

`rm_client_config(settings.rm)` is the `rm:` section as rm_client's config (a CA bundle implies
verification); `embedded_rm_url(settings)` is where the built-in emulator of `cluster.source:
embedded` answers. Shared by the composition root (harvester/app.py) and `harvester rm …`
(harvester/cli_rm.py), which must not pay for importing the whole sidecar.
"""

from __future__ import annotations

from rm_client import RMClientConfig

from harvester.config import KerberosSettings, RMEndpointSettings, Settings


def rm_client_config(rm: RMEndpointSettings, kerberos: KerberosSettings | None = None) -> RMClientConfig:
    """The `rm:` settings as rm_client's config (a CA bundle implies verification; with
    `auth: kerberos`, the identity of the `kerberos:` section)."""
    krb = kerberos or KerberosSettings()
    return RMClientConfig(
        urls=tuple(str(u) for u in rm.urls),
        user=rm.user,
        connect_timeout_s=rm.connect_timeout_s,
        read_timeout_s=rm.read_timeout_s,
        max_retries=rm.max_retries,
        backoff_base_s=rm.backoff_base_s,
        backoff_max_s=rm.backoff_max_s,
        auth=rm.auth,
        tls_verify=str(rm.ca_bundle) if rm.ca_bundle else rm.tls_verify,
        max_response_bytes=int(rm.max_response_mb * 1024 * 1024),
        kerberos_principal=krb.principal,
        kerberos_keytab=str(krb.keytab) if krb.keytab else None,
    )


def embedded_rm_url(settings: Settings) -> str:
    """Where the built-in emulator answers (the configured address; port 0 is resolved at start)."""
    return f"http://{settings.embedded.listen}"
