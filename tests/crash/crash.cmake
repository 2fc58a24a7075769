# Crash tests: kill -9 opsdeck-server mid-delivery (one server; two replicas on PostgreSQL) and
# check that every notification still arrives. Included from tests/CMakeLists.txt after the
# layer tests, so opsdeck_testsupport (which builds the server and the demo provider) exists.
opsdeck_add_test(tst_crash
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_crash.cpp
    LIBS opsdeck_server opsdeck_testsupport Qt6::Network
    LABELS crash
    TIMEOUT 420)
