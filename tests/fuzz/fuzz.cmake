# Fuzz targets, tests/fuzz/fuzz_<name>.cpp. In every build each one replays its seed corpus
# (tests/fuzz/corpus/<name>/) as the test tst_fuzz_<name>; with OPSDECK_FUZZ (a clang build,
# scripts/fuzz) each is also a libFuzzer binary fuzz_<name>.
function(opsdeck_add_fuzz_target name)
    cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
    set(dir ${CMAKE_CURRENT_LIST_DIR})
    set(sources ${dir}/fuzz_${name}.cpp ${dir}/fuzzsupport.h ${ARG_SOURCES})
    if(OPSDECK_FUZZ)
        add_executable(fuzz_${name} ${sources})
        target_link_libraries(fuzz_${name} PRIVATE Qt6::Core ${ARG_LIBS})
        target_include_directories(fuzz_${name} PRIVATE ${PROJECT_SOURCE_DIR})
        target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
        set_property(GLOBAL APPEND PROPERTY OPSDECK_FUZZ_TARGETS fuzz_${name})
    else()
        opsdeck_add_test(tst_fuzz_${name} SOURCES ${dir}/replay.cpp ${sources}
                         LIBS Qt6::Core ${ARG_LIBS} LABELS fuzz ARGS ${dir}/corpus/${name})
        target_include_directories(tst_fuzz_${name} PRIVATE ${PROJECT_SOURCE_DIR})
    endif()
endfunction()

opsdeck_add_fuzz_target(requestframing SOURCES ${PROJECT_SOURCE_DIR}/server/http/requestframing.cpp)
opsdeck_add_fuzz_target(httpresponseparser SOURCES ${PROJECT_SOURCE_DIR}/server/delivery/httpresponseparser.cpp)
opsdeck_add_fuzz_target(query LIBS opsdeck_core)
opsdeck_add_fuzz_target(jsonreader LIBS opsdeck_core)
opsdeck_add_fuzz_target(webhooksignature LIBS opsdeck_core)
opsdeck_add_fuzz_target(timestamps SOURCES ${PROJECT_SOURCE_DIR}/server/storage/timestamps.cpp LIBS opsdeck_core)

# `cmake --build <dir> --target fuzz`: every libFuzzer binary, and nothing else.
get_property(OPSDECK_FUZZ_BINARIES GLOBAL PROPERTY OPSDECK_FUZZ_TARGETS)
if(OPSDECK_FUZZ_BINARIES)
    add_custom_target(fuzz DEPENDS ${OPSDECK_FUZZ_BINARIES})
endif()
