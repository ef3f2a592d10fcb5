# The two Quick start commands (README): `make demo` and `make test`; `make check` is CI's slow half.
SWIFT ?= swift

.PHONY: demo test check bootstrap build

bootstrap:
	@scripts/bootstrap.sh

build: bootstrap
	$(SWIFT) build --product share-recovery

# The main job: create a wallet, back it up, lose the device, recover, show the statuses.
demo: build
	$(SWIFT) run --skip-build share-recovery demo

# The whole functional suite, without sanitizers: the command to run before every commit.
test: bootstrap
	scripts/test.sh

# The slow checks CI runs after `make test`: ASan and TSan passes, the Examples package, DocC.
check: bootstrap
	scripts/check.sh
