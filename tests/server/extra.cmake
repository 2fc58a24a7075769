# Every server test runs a second time against PostgreSQL (<name>_postgres); scripts/check and CI
# provide the cluster through OPSDECK_TEST_POSTGRES_URL.
file(GLOB opsdeck_server_pg_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/server/tst_*.cpp)
# Tests that touch no database (or only SQLite's log) need no PostgreSQL twin.
list(FILTER opsdeck_server_pg_tests EXCLUDE REGEX "/tst_(urlguard|callbacksender|callbacksenderpooling|callbacksenderfaults|interop|walcheckpointer)\\.cpp$")
foreach(src ${opsdeck_server_pg_tests})
    get_filename_component(name ${src} NAME_WE)
    add_test(NAME ${name}_postgres COMMAND ${name})
    set_tests_properties(${name}_postgres PROPERTIES
        TIMEOUT 300
        LABELS "server;postgres"
        ENVIRONMENT "LANG=C.UTF-8;LC_ALL=C.UTF-8;QT_QPA_PLATFORM=offscreen;OPSDECK_TEST_BACKEND=postgresql")
endforeach()
