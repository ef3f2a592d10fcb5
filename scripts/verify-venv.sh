# Sourced by scripts/independent-verify.sh and scripts/examples.sh: the venv .build-venv with the
# pinned packages of scripts/verify-requirements.txt (from PyPI; a no-op once installed). Sets $venv.
venv=.build-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r scripts/verify-requirements.txt
