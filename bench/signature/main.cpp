// What signing a callback costs: the Standard Webhooks HMAC-SHA256 over a body of the size the
// server sends, and SHA-256's block function with the SHA instructions (where this processor has
// them) against the portable code. Medians of several runs, each thousands of calls long.
#include "core/sha256blocks.h"
#include "core/webhooksignature.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <functional>

using namespace OpsDeck;

namespace {

// Nanoseconds per call of `work`, the median of `runs` runs of `calls` calls.
double median(int runs, int calls, const std::function<void()> &work)
{
    QList<double> perCall;
    for (int run = 0; run < runs; ++run) {
        QElapsedTimer timer;
        timer.start();
        for (int i = 0; i < calls; ++i)
            work();
        perCall.append(double(timer.nsecsElapsed()) / calls);
    }
    std::sort(perCall.begin(), perCall.end());
    return perCall.at(perCall.size() / 2);
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("HMAC-SHA256 signing and SHA-256 block costs"));
    parser.addHelpOption();
    QCommandLineOption bodyOption(QStringLiteral("body-bytes"), QStringLiteral("Signed body size (default 400)."),
                                  QStringLiteral("n"), QStringLiteral("400"));
    QCommandLineOption runsOption(QStringLiteral("runs"), QStringLiteral("Runs per figure (default 9)."),
                                  QStringLiteral("n"), QStringLiteral("9"));
    parser.addOptions({bodyOption, runsOption});
    parser.process(app);
    const int bodyBytes = std::max(0, parser.value(bodyOption).toInt());
    const int runs = std::max(1, parser.value(runsOption).toInt());

    QByteArray blocks(8 * Sha256Blocks::BlockBytes, 'x');
    const auto *data = reinterpret_cast<const unsigned char *>(blocks.constData());
    quint32 state[8];
    std::copy(Sha256Blocks::InitialState, Sha256Blocks::InitialState + 8, state);
    const double fast = median(runs, 20000, [&] { Sha256Blocks::compress(state, data, 8); }) / 8;
    const double portable = median(runs, 20000, [&] { Sha256Blocks::compressPortable(state, data, 8); }) / 8;
    std::printf("SHA-256 block: %.1f ns %s, %.1f ns portable (%.1fx)\n", fast,
                Sha256Blocks::accelerated() ? "with the SHA instructions" : "(no SHA instructions here: portable)",
                portable, portable / fast);

    // What CallbackSender signs: "<webhook-id>.<timestamp>.<body>" under a prepared key.
    const WebhookSignature::PreparedKey key(QByteArray(24, 'k'));
    const QByteArray id = QByteArrayLiteral("msg_2vQ3yD0bV1wS8xK5nJ7mH4pL");
    const QByteArray timestamp = QByteArrayLiteral("1764720000");
    const QByteArray body(bodyBytes, 'b');
    QByteArray mac;
    const double sign = median(runs, 50000, [&] { mac = key.mac({id, ".", timestamp, ".", body}); });
    std::printf("HMAC-SHA256 of a %d-byte body: %.0f ns per signature (%d blocks hashed)\n", bodyBytes, sign,
                int((id.size() + timestamp.size() + 2 + body.size() + 9 + 63) / 64) + 1);
    return mac.size() == Sha256Blocks::DigestBytes ? 0 : 1;
}
