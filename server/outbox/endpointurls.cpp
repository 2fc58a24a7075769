// Callback URLs stored before they were stored in one spelling: brought to it at start.
#include "deliveryrepository.h"

#include "writetransaction.h"

#include "server/delivery/urlguard.h"
#include "server/storage/database.h"
#include "server/storage/timestamps.h"

#include <QSet>
#include <QSqlQuery>
#include <QUrl>

namespace OpsDeck {

int DeliveryRepository::canonicalizeEndpointUrls(Problem *error)
{
    struct Stored
    {
        qint64 id = 0;
        qint64 provider = 0;
        QString url;
        QString canonical;
    };
    QList<Stored> respelled;
    QSet<std::pair<qint64, QString>> taken;
    {
        QSqlQuery q(m_db.connection());
        q.setForwardOnly(true);
        if (!q.exec(QStringLiteral("SELECT id, provider_id, url FROM endpoints ORDER BY id"))) {
            *error = Database::sqlProblem(q);
            return -1;
        }
        while (q.next()) {
            Stored s{q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toString(), {}};
            taken.insert({s.provider, s.url});
            const QUrl parsed(s.url, QUrl::StrictMode);
            if (!parsed.isValid())
                continue;
            s.canonical = CallbackUrlGuard::canonical(parsed);
            // A spelling the guard would refuse once canonical (over the length limit) stays as it was.
            if (s.canonical != s.url && CallbackUrlGuard(true).validate(s.canonical).isNull())
                respelled.append(s);
        }
    }
    if (respelled.isEmpty())
        return 0;
    WriteTransaction tx(m_db);
    if (!tx.isActive()) {
        *error = tx.problem();
        return -1;
    }
    int changed = 0;
    const QString now = nowTimestamp();
    for (const Stored &s : std::as_const(respelled)) {
        // Two spellings of one receiver already made two endpoints: they stay two (merging them
        // would move one's deliveries, state and health onto the other), and the canonical one is
        // what new registrations find.
        if (taken.contains({s.provider, s.canonical}))
            continue;
        QSqlQuery e(m_db.connection());
        e.prepare(QStringLiteral("UPDATE endpoints SET url = ?, version = version + 1, updated_at = ? WHERE id = ?"));
        e.addBindValue(s.canonical);
        e.addBindValue(now);
        e.addBindValue(s.id);
        QSqlQuery i(m_db.connection());
        i.prepare(QStringLiteral("UPDATE instances SET callback_url = ? WHERE provider_id = ? AND callback_url = ?"));
        i.addBindValue(s.canonical);
        i.addBindValue(s.provider);
        i.addBindValue(s.url);
        for (QSqlQuery *q : {&e, &i}) {
            if (!q->exec()) {
                *error = Database::sqlProblem(*q);
                return -1;
            }
        }
        if (!emitEndpoint(s.id, QStringLiteral("updated"), error))
            return -1;
        taken.insert({s.provider, s.canonical});
        ++changed;
    }
    return tx.commit(error) ? changed : -1;
}

} // namespace OpsDeck
