// A delivery's attempts and the chosen one's request and response.
#include "attemptlogview.h"

#include "valueformat.h"

#include <QFontDatabase>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace OpsDeck {

namespace {

constexpr qsizetype kKeptResponseBytes = 4096;

enum Column { AttemptColumn, AtColumn, StatusColumn, LatencyColumn, ErrorColumn, ColumnCount };

// Headers arrive as [[name, value], ...]; an object is accepted too.
QString headerLines(const QJsonValue &headers)
{
    QStringList lines;
    if (headers.isArray()) {
        for (const QJsonValue &pair : headers.toArray()) {
            const QJsonArray p = pair.toArray();
            lines.append(QStringLiteral("%1: %2").arg(p.at(0).toString(), p.at(1).toString()));
        }
    } else if (headers.isObject()) {
        const QJsonObject object = headers.toObject();
        for (auto it = object.constBegin(); it != object.constEnd(); ++it)
            lines.append(QStringLiteral("%1: %2").arg(it.key(), it.value().toString()));
    }
    return lines.join(QLatin1Char('\n'));
}

// A JSON body is easier to read indented; anything else is shown as it came.
QString bodyText(const QJsonValue &body)
{
    if (body.isObject() || body.isArray()) {
        return QString::fromUtf8(body.isObject() ? QJsonDocument(body.toObject()).toJson(QJsonDocument::Indented)
                                                 : QJsonDocument(body.toArray()).toJson(QJsonDocument::Indented));
    }
    const QString text = body.toString();
    QJsonParseError error;
    const QJsonDocument json = QJsonDocument::fromJson(text.toUtf8(), &error);
    if (error.error == QJsonParseError::NoError && !json.isNull())
        return QString::fromUtf8(json.toJson(QJsonDocument::Indented));
    return text;
}

// Under a millisecond (a refused connection on this host) is not "0 ms".
QString latencyText(qint64 ms)
{
    return ms < 1 ? AttemptLogView::tr("< 1 ms") : AttemptLogView::tr("%1 ms").arg(ms);
}

// Wide enough for a signature header line and a JSON line beside each other.
constexpr int kSideBySideWidth = 900;

// Logged by the server that took over the delivery from one that stopped mid-attempt: whether the
// request went out, and what came back, nobody knows.
bool interrupted(const QJsonObject &attempt)
{
    return attempt.value(QStringLiteral("error_class")).toString() == QLatin1String("interrupted");
}

QString errorText(const QJsonObject &attempt)
{
    const QString errorClass = attempt.value(QStringLiteral("error_class")).toString();
    const QString error = attempt.value(QStringLiteral("error")).toString();
    if (errorClass.isEmpty())
        return error;
    return error.isEmpty() ? errorClass : AttemptLogView::tr("%1: %2").arg(errorClass, error);
}

// One side of an attempt: a title over read-only monospace text, added to the splitter.
QPlainTextEdit *addSide(QSplitter *sides, const QString &title, const QString &objectName, const QString &accessibleName)
{
    auto *box = new QWidget(sides);
    auto *label = new QLabel(title, box);
    QFont bold = label->font();
    bold.setBold(true);
    label->setFont(bold);
    auto *edit = new QPlainTextEdit(box);
    edit->setObjectName(objectName);
    edit->setAccessibleName(accessibleName);
    edit->setReadOnly(true);
    edit->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    label->setBuddy(edit);
    auto *layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(label);
    layout->addWidget(edit, 1);
    sides->addWidget(box);
    return edit;
}

} // namespace

AttemptLogView::AttemptLogView(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("attemptLog"));
    setAccessibleName(tr("Delivery attempts"));

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("attemptStatus"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *split = new QSplitter(Qt::Vertical, this);
    m_list = new QTreeWidget(split);
    m_list->setObjectName(QStringLiteral("attemptList"));
    m_list->setAccessibleName(tr("Attempts"));
    m_list->setRootIsDecorated(false);
    m_list->setAlternatingRowColors(true);
    m_list->setColumnCount(ColumnCount);
    m_list->setHeaderLabels({tr("#"), tr("At"), tr("Status"), tr("Latency"), tr("Error")});
    m_list->header()->setStretchLastSection(true);
    m_list->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_list->header()->setSectionResizeMode(ErrorColumn, QHeaderView::Stretch);

    auto *sides = new QSplitter(Qt::Vertical, split);
    m_sides = sides;
    m_request = addSide(sides, tr("Request"), QStringLiteral("attemptRequest"), tr("Request of the chosen attempt"));
    m_response = addSide(sides, tr("Response"), QStringLiteral("attemptResponse"), tr("Response of the chosen attempt"));
    split->addWidget(m_list);
    split->addWidget(sides);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_message);
    layout->addWidget(split, 1);

    connect(m_list, &QTreeWidget::currentItemChanged, this,
            [this](QTreeWidgetItem *current) { showAttempt(current ? m_list->indexOfTopLevelItem(current) : -1); });
}

void AttemptLogView::setAttempts(const QJsonArray &attempts)
{
    // The attempt the user chose stays chosen when the list comes again (the delivery changed);
    // while the newest was shown, the newest is.
    QTreeWidgetItem *was = m_list->currentItem();
    const bool followNewest = !was || m_list->indexOfTopLevelItem(was) == m_list->topLevelItemCount() - 1;
    const QString chosen = was ? was->text(AttemptColumn) : QString();
    m_attempts = attempts;
    m_list->clear();
    QList<QTreeWidgetItem *> items;
    for (const QJsonValue &value : attempts) {
        const QJsonObject a = value.toObject();
        const QJsonValue status = a.value(QStringLiteral("response_status"));
        const QJsonValue latency = a.value(QStringLiteral("latency_ms"));
        auto *item = new QTreeWidgetItem(
            {QString::number(a.value(QStringLiteral("attempt")).toInteger()),
             displayTimestamp(a.value(QStringLiteral("at")).toString()),
             status.isDouble()  ? QString::number(status.toInteger())
             : interrupted(a)   ? tr("unknown")
                                : tr("no answer"),
             latency.isDouble() ? latencyText(latency.toInteger()) : tr("—"), errorText(a)});
        item->setToolTip(ErrorColumn, errorText(a));
        item->setTextAlignment(AttemptColumn, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(LatencyColumn, Qt::AlignRight | Qt::AlignVCenter);
        items.append(item);
    }
    m_list->addTopLevelItems(items);
    setMessage(attempts.isEmpty() ? tr("No attempt yet.") : QString());
    // The newest attempt is the one a provider looks at first.
    QTreeWidgetItem *current = items.isEmpty() ? nullptr : items.constLast();
    if (!followNewest) {
        for (QTreeWidgetItem *item : std::as_const(items)) {
            if (item->text(AttemptColumn) == chosen)
                current = item;
        }
    }
    if (current)
        m_list->setCurrentItem(current);
    else
        showAttempt(-1);
}

void AttemptLogView::setMessage(const QString &message)
{
    m_message->setText(message);
    m_message->setVisible(!message.isEmpty());
}

void AttemptLogView::clear()
{
    m_attempts = {};
    m_list->clear();
    showAttempt(-1);
    setMessage(QString());
}

int AttemptLogView::attemptCount() const
{
    return m_list->topLevelItemCount();
}

QString AttemptLogView::message() const
{
    return m_message->text();
}

QString AttemptLogView::requestText() const
{
    return m_request->toPlainText();
}

QString AttemptLogView::responseText() const
{
    return m_response->toPlainText();
}

void AttemptLogView::showAttempt(int row)
{
    if (row < 0 || row >= m_attempts.size()) {
        m_request->clear();
        m_response->clear();
        return;
    }
    const QJsonObject a = m_attempts.at(row).toObject();
    const QString headers = headerLines(a.value(QStringLiteral("request_headers")));
    m_request->setPlainText((headers.isEmpty() ? tr("(headers not recorded)") : headers) + QStringLiteral("\n\n")
                            + bodyText(a.value(QStringLiteral("request_body"))));
    const QJsonValue status = a.value(QStringLiteral("response_status"));
    QString response;
    if (status.isDouble()) {
        response = tr("HTTP %1 after %2").arg(status.toInteger()).arg(latencyText(a.value(QStringLiteral("latency_ms")).toInteger()));
        const QString headers = headerLines(a.value(QStringLiteral("response_headers")));
        if (!headers.isEmpty())
            response += QLatin1Char('\n') + headers;
        const QJsonValue body = a.value(QStringLiteral("response_body"));
        response += QStringLiteral("\n\n") + bodyText(body);
        // The server keeps the first 4 KiB of a response: a body that long was cut there.
        if (body.toString().toUtf8().size() >= kKeptResponseBytes)
            response += tr("\n… (only the first 4 KiB of the response are kept)");
    } else if (interrupted(a)) {
        response = tr("Outcome unknown: the request may have reached the endpoint\n%1").arg(errorText(a));
    } else {
        // No answer: what went wrong is all there is to show.
        const qint64 latency = a.value(QStringLiteral("latency_ms")).toInteger();
        response = latency < 1 ? tr("No response\n%1").arg(errorText(a))
                               : tr("No response after %1\n%2").arg(latencyText(latency), errorText(a));
    }
    // An "http" error only repeats the status; anything else (a body cut off by the timeout)
    // is news.
    if (status.isDouble() && !errorText(a).isEmpty()
        && a.value(QStringLiteral("error_class")).toString() != QLatin1String("http"))
        response.append(QStringLiteral("\n\n") + errorText(a));
    m_response->setPlainText(response);
}

Qt::Orientation AttemptLogView::sidesOrientation() const
{
    return m_sides->orientation();
}

void AttemptLogView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    const Qt::Orientation wanted = width() >= kSideBySideWidth ? Qt::Horizontal : Qt::Vertical;
    if (m_sides->orientation() != wanted)
        m_sides->setOrientation(wanted);
}

} // namespace OpsDeck
