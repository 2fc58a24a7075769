<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>OpsDeck::BulkRetryDialog</name>
    <message numerus="yes">
        <source>%n callback(s)</source>
        <translation>
            <numerusform>%n callback</numerusform>
            <numerusform>%n callbacks</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Retry %n callback(s)</source>
        <translation>
            <numerusform>Retry %n callback</numerusform>
            <numerusform>Retry %n callbacks</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n failed</source>
        <comment>callbacks in state FAILED</comment>
        <translation>
            <numerusform>%n failed</numerusform>
            <numerusform>%n failed</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n cancelled</source>
        <comment>callbacks in state CANCELLED</comment>
        <translation>
            <numerusform>%n cancelled</numerusform>
            <numerusform>%n cancelled</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n pending</source>
        <comment>callbacks in state PENDING</comment>
        <translation>
            <numerusform>%n pending</numerusform>
            <numerusform>%n pending</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>OpsDeck::MainWindow</name>
    <message numerus="yes">
        <source>Retried %n callback(s)</source>
        <translation>
            <numerusform>Retried %n callback</numerusform>
            <numerusform>Retried %n callbacks</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n pending operation(s)</source>
        <translation>
            <numerusform>%n pending operation</numerusform>
            <numerusform>%n pending operations</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>and %n more</source>
        <translation>
            <numerusform>and %n more</numerusform>
            <numerusform>and %n more</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>OpsDeck::ResourceView</name>
    <message numerus="yes">
        <source>%n row(s)</source>
        <translation>
            <numerusform>%n row</numerusform>
            <numerusform>%n rows</numerusform>
        </translation>
    </message>
</context>
</TS>
