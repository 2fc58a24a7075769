# A second run of test binary `name`, as <name>_<suffix>, with one more environment variable.
function(opsdeck_add_test_variant name suffix labels variable)
    add_test(NAME ${name}_${suffix} COMMAND ${name})
    set_tests_properties(${name}_${suffix} PROPERTIES
        TIMEOUT 300
        LABELS "${labels}"
        ENVIRONMENT "LANG=C.UTF-8;LC_ALL=C.UTF-8;QT_QPA_PLATFORM=offscreen;${variable}")
endfunction()

# Every server test runs a second time against PostgreSQL (<name>_postgres); scripts/check and CI
# provide the cluster through OPSDECK_TEST_POSTGRES_URL.
file(GLOB opsdeck_server_pg_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/server/tst_*.cpp)
# Tests that touch no database (or only SQLite's log) need no PostgreSQL twin.
list(FILTER opsdeck_server_pg_tests EXCLUDE REGEX "/tst_(urlguard|callbacksender|callbacksenderpooling|callbacksenderfaults|interop|walcheckpointer|epolleventdispatcher)\\.cpp$")
foreach(src ${opsdeck_server_pg_tests})
    get_filename_component(name ${src} NAME_WE)
    opsdeck_add_test_variant(${name} postgres "server;postgres" OPSDECK_TEST_BACKEND=postgresql)
endforeach()

# The callback sender's tests run a second time with the main thread on EpollEventDispatcher,
# the sending thread's event loop (<name>_epoll).
foreach(name tst_callbacksender tst_callbacksenderpooling tst_callbacksenderfaults tst_callbackconnectionpool)
    opsdeck_add_test_variant(${name} epoll server OPSDECK_TEST_EVENT_DISPATCHER=epoll)
endforeach()
