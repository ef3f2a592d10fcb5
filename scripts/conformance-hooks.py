# Loaded by scripts/conformance.sh into schemathesis.
import itertools
import json
import os
import re
import secrets

import schemathesis
import yaml  # schemathesis's own dependency

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

# The stateful group (conformance.sh sets CONFORMANCE_OTP_FILE and CONFORMANCE_CIPHERTEXTS for it only)
# follows the document's links: create a flow, verify it, use its token. Two things the links cannot carry
# come from outside the API, as they do for an integrator: the one-time code, which the user reads from
# the OTP sender (here the server's OTP file), and a cipherText that parses, which a wallet encrypts
# (here one of Vectors/ciphertext.json's valid cases of the method in the query; every other request
# body of the group is generated).
_OTP_FILE = os.environ.get("CONFORMANCE_OTP_FILE")
_CIPHERTEXTS = os.environ.get("CONFORMANCE_CIPHERTEXTS")
_QUERY_METHOD = {"password": "PASSWORD", "passkey": "PASSKEY", "iCloud": "ICLOUD", "googleDrive": "GDRIVE",
                 "cloudKey": "CUSTOM", "recoveryCode": "RECOVERY_CODE"}


def _operation_id(case):
    return case.operation.definition.raw.get("operationId")


def _otp_code(flow_id):
    try:
        with open(_OTP_FILE) as lines:
            for line in lines:
                message = json.loads(line)
                if message.get("flowId") == flow_id:
                    return message.get("code")
    except OSError:
        pass
    return None


def _valid_ciphertexts():
    with open(_CIPHERTEXTS) as vectors:
        cases = json.load(vectors)["cases"]
    table = {}
    for case in cases:
        if case.get("result") == "valid" and case.get("method") in _QUERY_METHOD:
            table.setdefault(_QUERY_METHOD[case["method"]], []).append(case["cipherText"])
    return table


_VALID = _valid_ciphertexts() if _CIPHERTEXTS else {}
# userId -> the backup method last stored for it in this run (after_call keeps it).
_stored = {}
# The token purposes (read from openapi.yaml's TokenPurpose), dealt in turn to the flows the stateful group
# starts, with no purpose (which means recover) as an eighth choice. The generator mostly leaves the
# optional purpose out, or draws the enum's first member, while a store needs a token of the second:
# one run (seed 4183597736) stored a cipherText once in 209 attempts, so a link that follows a store
# went unfollowed. Dealt in turn, each choice starts an eighth of the flows. A flow a link starts
# after a store (openapi.yaml, FetchAfterStore and DeleteAfterStore) keeps the purpose its link
# names: its identifier is a user with something stored.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "openapi.yaml")) as document:
    _PURPOSES = yaml.safe_load(document)["components"]["schemas"]["TokenPurpose"]["enum"]
_dealt = itertools.count()


def _dealt_purpose(body):
    turn = next(_dealt) % (len(_PURPOSES) + 1)
    if turn == len(_PURPOSES):
        return {key: value for key, value in body.items() if key != "purpose"}
    return {**body, "purpose": _PURPOSES[turn]}


def _stateful(case):
    operation = _operation_id(case)
    # A token the server minted (srt1.…) reached this request through a link: it is a real credential,
    # so ignored_auth must treat it as one (resend without it and with a forged one, expect 401 or 403)
    # rather than as a generated, presumably invalid, header. schemathesis marks configured credentials
    # this way; its attribute is private, hence the pinned version in conformance.sh.
    authorization = (case.headers or {}).get("Authorization")
    if isinstance(authorization, str) and authorization.startswith("Bearer srt1."):
        case._has_explicit_auth = True
    if operation == "createRecoveryFlow" and isinstance(case.body, dict):
        if case.body.get("purpose", "recover") in _PURPOSES and case.body.get("identifier") not in _stored:
            case.body = _dealt_purpose(case.body)
    elif operation == "verifyRecoveryFlow" and isinstance(case.body, dict):
        code = _otp_code(case.path_parameters.get("flowId"))
        if code is not None:
            case.body = {**case.body, "code": code}
    elif operation in ("getUserBackupShare", "deleteUserBackupShare"):
        # The method a client would have seen listed (getRecoveryMethods) for this user, once one is stored.
        method = _stored.get(case.path_parameters.get("userId"))
        if method is not None and isinstance(case.query, dict):
            case.query = {**case.query, "backupMethod": method}
    elif operation == "putUserBackupShare" and isinstance(case.body, dict):
        choices = _VALID.get((case.query or {}).get("backupMethod"))
        if choices:
            case.body = {**case.body, "cipherText": choices[next(_counter) % len(choices)]}


@schemathesis.hook
def before_call(context, case, kwargs):
    headers = case.headers or {}
    for name in list(headers):
        value = headers[name]
        if name.lower() == "idempotency-key" and isinstance(value, str) and _WELL_FORMED.match(value):
            suffix = f".{_run}.{next(_counter)}"
            headers[name] = value[: 255 - len(suffix)] + suffix
    if _OTP_FILE:
        _stateful(case)


# Remembers which method was stored for which user (for the fetch and delete that follow), and, in the
# stateful group, appends "operationId status" for every answer to CONFORMANCE_STATUS_FILE, so that
# conformance.sh can require each chain to have succeeded end to end (a method stored, then fetched).
_STATUS_FILE = os.environ.get("CONFORMANCE_STATUS_FILE")


@schemathesis.hook
def after_call(context, case, response):
    operation = _operation_id(case)
    user = (case.path_parameters or {}).get("userId")
    if operation == "putUserBackupShare" and response.status_code == 204:
        _stored[user] = (case.query or {}).get("backupMethod")
    elif operation == "deleteUserBackupShare" and response.status_code == 204:
        _stored.pop(user, None)
    if _STATUS_FILE:
        with open(_STATUS_FILE, "a") as statuses:
            statuses.write(f"{_operation_id(case)} {response.status_code}\n")
