# Loaded by scripts/conformance.sh into schemathesis.
import itertools
import re
import secrets

import schemathesis

# An integrator draws a fresh Idempotency-Key for every request (ShareRecoveryHTTP does); schemathesis
# draws keys like "0" again and again, and the server rightly answers 422 idempotencyKeyReused when a key
# comes back with another request of the same credentials, before the route looks at anything else, a
# missing token included (openapi.yaml, IdempotencyKey). So a well-formed key gets a unique suffix; a
# malformed one is sent as drawn, so the negative cases still reach the server. Reuse itself is tested
# by IdempotencyTests.
_WELL_FORMED = re.compile(r"^[!-~]{1,255}$")
_counter = itertools.count()
# conformance.sh runs schemathesis once per token purpose: the suffix is unique across those runs too.
_run = secrets.token_hex(4)


@schemathesis.hook
def before_call(context, case, kwargs):
    headers = case.headers or {}
    for name in list(headers):
        value = headers[name]
        if name.lower() == "idempotency-key" and isinstance(value, str) and _WELL_FORMED.match(value):
            suffix = f".{_run}.{next(_counter)}"
            headers[name] = value[: 255 - len(suffix)] + suffix
