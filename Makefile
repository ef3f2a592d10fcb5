# The two Quick start commands (README): `make demo` and `make test`.
SWIFT ?= swift

.PHONY: demo test bootstrap build

bootstrap:
	@scripts/bootstrap.sh

build: bootstrap
	$(SWIFT) build --product share-recovery

# The main job: create a wallet, back it up, lose the device, recover, show the statuses.
demo: build
	$(SWIFT) run --skip-build share-recovery demo

# The whole test suite (what CI runs): warnings are errors in our own targets.
test: bootstrap
	scripts/test.sh
