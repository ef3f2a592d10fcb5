# Sourced by scripts/test.sh and scripts/sanitizers.sh: the venv .build/events-venv with the
# `standardwebhooks` package from PyPI, the receiver nobody here wrote that EventsTests, the
# fault-proxy trials and the two-server CLI test run (scripts/events-receiver.py) to verify the
# server's signed deliveries. A no-op once installed.
if [ ! -x .build/events-venv/bin/python ]; then
    mkdir -p .build
    python3 -m venv .build/events-venv
fi
.build/events-venv/bin/pip install --quiet --disable-pip-version-check standardwebhooks==1.1.0
