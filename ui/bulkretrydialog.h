// The bulk retry of callbacks: which states, to which endpoint or provider (or all), how many that
// is (the server's dry run, asked again on every change), why, and then the retry itself.
#pragma once

#include <QDialog>
#include <QHash>
#include <QJsonObject>
#include <QPointer>
#include <QStringList>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QTimer;

namespace OpsDeck {

class ApiClient;
struct ApiResult;

// What the dialog starts from: the delivery the operator was looking at.
struct BulkRetryScope
{
    QString state;            // checked at first when retry leaves from it, else FAILED is
    qint64 endpointId = 0;    // 0: no endpoint scope is offered
    QString endpointText;     // "#5 https://provider.example/hook"
    qint64 providerId = 0;    // 0: no provider scope is offered
    QString providerText;     // "Ledger Inc (#3)"
};

class BulkRetryDialog final : public QDialog
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(BulkRetryDialog)

public:
    // api: not owned; should a new connection replace it, the dialog asks nothing more.
    BulkRetryDialog(ApiClient *api, const BulkRetryScope &scope, QWidget *parent = nullptr);

    // The states retry leaves from: FAILED, CANCELLED, then PENDING.
    static QStringList retryableStates();

    QStringList checkedStates() const;
    // The filter the server gets, without the state: {"endpoint": 5}, {"provider": 3} or {}.
    QJsonObject scopeFilter() const;
    // The last dry run's count of the checked states; -1 while it is being counted or failed.
    qint64 count() const { return m_total; }
    QString countText() const;
    // Why the last retry was refused (then nothing was retried); empty when it was not.
    QString errorText() const;
    // The callbacks changed (the feed, a relist after a reconnection): the count is asked again
    // shortly, the last one shown meanwhile (not while a retry is on its way).
    void callbacksChanged();

signals:
    // The current choice's dry run has answered: its count, or -1 when it failed.
    void counted(qint64 count);
    // Everything asked for was retried (the dialog then closes); `held` of them wait for a
    // paused or disabled endpoint.
    void retried(qint64 count, qint64 held);

private:
    void recount();
    // The same choice counted again: the last count stays shown until the new one comes.
    void countAgain();
    // The dry run of the current choice, answered to the current generation.
    void askCount();
    void onCounted(int generation, const ApiResult &result);
    void retry();
    void onRetried(const ApiResult &result);
    void setBusy(bool busy);
    void updateButtons();

    QPointer<ApiClient> m_api; // not owned
    QHash<QString, QCheckBox *> m_states;
    QComboBox *m_scope = nullptr;
    QLabel *m_count = nullptr;
    QLabel *m_error = nullptr; // a refused retry
    QLineEdit *m_reason = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
    // The dry run of the current choice: answers to an older choice are dropped.
    int m_generation = 0;
    qint64 m_total = -1;
    // The retry: one request for every checked state, which the server runs as one transaction.
    bool m_retrying = false;
    QTimer *m_countAgain = nullptr; // gathers the changes of a busy feed into one dry run
};

} // namespace OpsDeck
