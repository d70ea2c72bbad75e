# Lambda builds, included by the Makefile.
#
# `sam build` runs `make build-<LogicalId>` for every function with
# `Metadata: {BuildMethod: makefile}` and sets ARTIFACTS_DIR; each target
# below builds ./functions/<folder> into $(ARTIFACTS_DIR)/bootstrap for
# provided.al2023 on arm64. Without SAM, ARTIFACTS_DIR defaults to
# bin/lambda/<LogicalId>; `make build` builds them all, `make sizes` prints
# each bootstrap's size in bytes.
#
# Adding a function is one line in LAMBDAS: <LogicalId>:<folder under functions/>.

GO         ?= go
LAMBDA_DIR ?= bin/lambda

LAMBDAS := \
	ValidateFunction:validate \
	Gem5Function:gem5 \
	Gem1Function:gem1 \
	Gem2Function:gem2 \
	Gem3Function:gem3 \
	Gem4Function:gem4 \
	CorrectionFunction:correction \
	ReportFunction:report \
	SummaryFunction:summary \
	TriggerFunction:trigger \
	ApiFunction:api \
	FlagsFunction:flags

lambda_id  = $(word 1,$(subst :, ,$(1)))
lambda_dir = $(word 2,$(subst :, ,$(1)))
LAMBDA_IDS := $(foreach l,$(LAMBDAS),$(call lambda_id,$(l)))

# build-<LogicalId>: $(1) is the LogicalId, $(2) the folder. ARTIFACTS_DIR
# from SAM (environment) or the command line wins over the default.
define lambda_rule
.PHONY: build-$(1)
build-$(1): ARTIFACTS_DIR ?= $(LAMBDA_DIR)/$(1)
build-$(1):
	@mkdir -p "$$(ARTIFACTS_DIR)"
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $$(GO) build -tags lambda.norpc -trimpath -ldflags="-s -w" -o "$$(ARTIFACTS_DIR)/bootstrap" ./functions/$(2)
endef
$(foreach l,$(LAMBDAS),$(eval $(call lambda_rule,$(call lambda_id,$(l)),$(call lambda_dir,$(l)))))

.PHONY: build sizes

# Every function into bin/lambda/<LogicalId>/bootstrap (do not pass
# ARTIFACTS_DIR here: all functions would share one bootstrap).
build: $(addprefix build-,$(LAMBDA_IDS))

sizes: build
	@for id in $(LAMBDA_IDS); do \
	  printf '%-20s %10d bytes\n' "$$id" "$$(wc -c < $(LAMBDA_DIR)/$$id/bootstrap)"; \
	done
