# Karpenter v1.15 needs Go >= 1.26.9; machines ship 1.26.8, so pin the toolchain everywhere.
export GOTOOLCHAIN := go1.27.3
GO ?= go

.PHONY: build start test test-short bench fuzz lint clean generate

# Stamp the Kubernetes version the embedded components report (/version, kubectl version).
KUBE_VERSION_LDFLAGS := -X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37

build:
	$(GO) build -ldflags "$(KUBE_VERSION_LDFLAGS)" -o bin/karplab ./cmd/karplab

# The lab's main job: build, then start the lab daemon (returns once everything is Ready).
start: build
	bin/karplab start

# What CI runs: every package, integration tests included.
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 60m ./...

# Quick loop for development: skips the heavy integration tests.
test-short:
	$(GO) test -short -count=1 ./...

# -p 1: one package's benchmarks at a time, so no figure is taken while another
# package's control plane competes for the two cores.
bench:
	$(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -timeout 30m ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseQuery -fuzztime 60s ./fakeec2/

# Regenerates committed code: the EC2NodeClass deepcopy functions and CRD. Not a
# dependency of build or test (the output is committed).
CONTROLLER_GEN ?= $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
generate:
	$(CONTROLLER_GEN) object crd paths=./cluster/karpenter/apis/v1/... output:crd:artifacts:config=cluster/karpenter/apis/v1/crds

clean:
	rm -rf bin
