# The README's two commands, scripts/run and scripts/test, install what is missing (make
# included) and then run these:
#   make run     install what is missing, build, start the console on its embedded server with demo data
#   make check   install what is missing, build, run every test
# Also: make build, make check-sanitize (ASan + UBSan), make fuzz (libFuzzer, FUZZ_SECONDS per
# target), make server (opsdeck-server alone).

BUILD ?= build
SANITIZE_BUILD ?= build-sanitize
WERROR ?= $(if $(CI),ON,OFF)
CMAKE_ARGS ?=

FUZZ_SECONDS ?= 60

.PHONY: run check build setup server check-sanitize fuzz clean

setup:
	@scripts/setup

$(BUILD)/build.ninja:
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPSDECK_WERROR=$(WERROR) $(CMAKE_ARGS) >/dev/null

build: setup $(BUILD)/build.ninja
	@cmake --build $(BUILD) -- --quiet

run: build
	@$(BUILD)/app/opsdeck --demo

server: build
	@$(BUILD)/server/opsdeck-server serve --listen 127.0.0.1:8080

check: build
	@scripts/check $(BUILD)

$(SANITIZE_BUILD)/build.ninja:
	@cmake -S . -B $(SANITIZE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOPSDECK_SANITIZE=ON -DOPSDECK_WERROR=$(WERROR) $(CMAKE_ARGS) >/dev/null

check-sanitize: setup $(SANITIZE_BUILD)/build.ninja
	@cmake --build $(SANITIZE_BUILD) -- --quiet
	@ASAN_OPTIONS=halt_on_error=1:detect_leaks=0:strict_string_checks=1 \
	 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	 scripts/check $(SANITIZE_BUILD)

fuzz: setup
	@scripts/fuzz $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) build-fuzz
