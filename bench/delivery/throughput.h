// What a throughput run of the delivery benchmark measured, and how its lines put it.
#pragma once

#include "apiprobe.h"

#include <QString>

namespace OpsDeck::Bench {

struct Throughput
{
    double seconds = 0;
    double rate = 0;        // all deliveries
    double healthyRate = 0; // deliveries to endpoints that answer, between 10% and 90% done
    double cpuPerDelivery = 0; // microseconds of this process's CPU per delivery to an answering endpoint
    double sendCpu = 0;        // of which the sending thread's
    double storeCpu = 0;       // and the outbox store's
    double providerCpu = 0;    // microseconds of the provider processes' CPU per delivery to an answering endpoint
    double busyCores = 0;      // the server's and the providers' CPU over the run's time
    ApiProbe::Result api;      // with probeApi: writes through the API meanwhile
};

// "(sending thread N, store thread M)": microseconds per delivery.
QString threadShare(const Throughput &t);
// Where a run's rate stands against the machine: how many of its cores the server and the
// providers kept busy, and the rate at which all of them would be at this run's CPU per delivery
// (the bound of a provider sharing the server's cores).
QString coreShare(const Throughput &t, double wrkRate);
// "N writes, p50 …, p99 …, max …".
QString apiLine(const ApiProbe::Result &r);

} // namespace OpsDeck::Bench
