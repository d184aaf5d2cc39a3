# Karpenter v1.15 needs Go >= 1.26.9; machines ship 1.26.8, so pin the toolchain everywhere.
export GOTOOLCHAIN := go1.27.3
GO ?= go
# make test pipes go test into its summary: a failure anywhere in the pipe fails the target.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: build start kind-image workshop-image test test-short test-repeat bench fuzz lint clean

# Stamp the Kubernetes version the embedded components report (/version, kubectl version).
KUBE_VERSION_LDFLAGS := -X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37

build:
	$(GO) build -ldflags "$(KUBE_VERSION_LDFLAGS)" -o bin/karplab ./cmd/karplab

# The lab's main job: build, then start the lab daemon (returns once everything is Ready).
start: build
	bin/karplab start

# The kind backend's node image, built offline (Debian's packages, kind's base-image files,
# Kubernetes from this go.mod, control-plane images FROM scratch) in the engine kind would use.
# A no-op when the engine has the image of these inputs already.
kind-image: build
	bin/karplab kind-image

# The workshop's seat image, built offline (Debian's packages by debootstrap with the aws CLI,
# a learner's account, this bin/karplab and the exercises) in the engine the seats use (Docker
# where it runs them). A no-op when the engine has the image of these inputs already.
workshop-image: build
	bin/karplab workshop image

# What CI runs: every package, integration tests included. The karplab binary is built once
# for every package's tests (KARPLAB_TEST_BINARY). Three packages at a time (-p 3): labs, the
# longest, holds one slot throughout, so the others share two; the long ones go first. The
# tests mostly wait on timers (Karpenter's, the emulator's, the real clients' start-up), so
# the two cores carry a third package. The summary ends with the slowest tests and where the
# labs' time went (.ci/testtimes). Then the testcontainers module, a Go module of its own
# (fakeec2/container), on the Docker engine.
TEST_ORDER := ./labs/ ./fakeec2/ ./cluster/karpenter/ ./cluster/ ./...
test: build
	$(GO) vet ./...
	$(GO) -C fakeec2/container vet ./...
	KARPLAB_TEST_BINARY=$(CURDIR)/bin/karplab $(GO) test -p 3 -count=1 -timeout 45m -json $(TEST_ORDER) | $(GO) run ./.ci/testtimes -json test-results.json
	$(GO) -C fakeec2/container test -count=1 -timeout 10m ./...

# Quick loop for development: skips the heavy integration tests.
test-short:
	$(GO) test -short -count=1 ./...

# The learner's loop, five times per lab: karplab reset, lab run NAME --solution, check NAME
# at once (must pass every time). About an hour; make test leaves it out.
test-repeat:
	KARPLAB_REPEAT=5 $(GO) test -count=1 -timeout 3h -run TestIntegrationRepeatSolutions -v ./labs/

# -p 1: one package's benchmarks at a time, so no figure is taken while another
# package's control plane competes for the two cores.
bench:
	$(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -timeout 30m ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseQuery -fuzztime 60s ./fakeec2/

clean:
	rm -rf bin
