// Modal questions and notices with an injectable answer.
#include "messagebox.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QLabel>
#include <QList>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include <utility>

namespace OpsDeck {

namespace {

std::optional<QMessageBox::StandardButton> s_nextAnswer;
std::optional<QMessageBox::StandardButton> s_autoAnswer;
QList<std::optional<QString>> s_nextTexts; // answers queued by tests, first asked first
QString s_lastText;
std::function<void()> s_whileAsking;

} // namespace

std::optional<QMessageBox::StandardButton> MessageBox::takeAnswer(const QString &text)
{
    if (s_nextAnswer) {
        const auto answer = *s_nextAnswer;
        s_nextAnswer.reset();
        s_lastText = text;
        return answer;
    }
    if (s_autoAnswer) {
        s_lastText = text;
        return s_autoAnswer;
    }
    return std::nullopt;
}

QMessageBox::StandardButton MessageBox::question(QWidget *parent, const QString &title, const QString &text,
                                                 QMessageBox::StandardButtons buttons,
                                                 QMessageBox::StandardButton defaultButton)
{
    if (const auto answer = takeAnswer(text))
        return *answer;
    return QMessageBox::question(parent, title, text, buttons, defaultButton);
}

void MessageBox::warning(QWidget *parent, const QString &title, const QString &text)
{
    if (takeAnswer(text))
        return;
    notice(QMessageBox::Warning, parent, title, text);
}

void MessageBox::information(QWidget *parent, const QString &title, const QString &text)
{
    if (takeAnswer(text))
        return;
    notice(QMessageBox::Information, parent, title, text);
}

void MessageBox::secret(QWidget *parent, const QString &title, const QString &text, const QString &secret)
{
    if (takeAnswer(text))
        return;
    QMessageBox box(QMessageBox::Information, title, text, QMessageBox::Ok, parent);
    box.setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    QPushButton *copy = box.addButton(QMessageBox::tr("&Copy secret"), QMessageBox::ActionRole);
    copy->setObjectName(QStringLiteral("copySecret"));
    // Copying keeps the box open: the secret is still to be read or copied again.
    copy->disconnect();
    QObject::connect(copy, &QPushButton::clicked, copy, [copy, secret] {
        QGuiApplication::clipboard()->setText(secret);
        copy->setText(QMessageBox::tr("Copied"));
    });
    box.exec();
}

void MessageBox::notice(QMessageBox::Icon icon, QWidget *parent, const QString &title, const QString &text)
{
    QMessageBox box(icon, title, text, QMessageBox::Ok, parent);
    // A server's refusal goes into a ticket, a new secret into a provider's configuration: both
    // must be copyable.
    box.setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    box.exec();
}

std::optional<QString> MessageBox::getText(QWidget *parent, const QString &title, const QString &label,
                                           const QString &initial)
{
    if (!s_nextTexts.isEmpty()) {
        s_lastText = label;
        if (const auto meanwhile = std::exchange(s_whileAsking, nullptr))
            meanwhile();
        return s_nextTexts.takeFirst();
    }
    // What is asked is never optional (a reason for the audit log, a callback URL): OK waits for
    // some text, which goes without the spaces around it.
    QDialog dialog(parent);
    dialog.setObjectName(QStringLiteral("textDialog"));
    dialog.setWindowTitle(title);
    auto *layout = new QVBoxLayout(&dialog);
    auto *question = new QLabel(label, &dialog);
    question->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    auto *edit = new QLineEdit(&dialog);
    edit->setObjectName(QStringLiteral("textAnswer"));
    edit->setAccessibleName(title);
    edit->setAccessibleDescription(label);
    edit->setMinimumWidth(edit->fontMetrics().averageCharWidth() * 48);
    question->setBuddy(edit);
    edit->setText(initial);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    QPushButton *ok = buttons->button(QDialogButtonBox::Ok);
    const auto follow = [ok](const QString &text) {
        const bool blank = text.trimmed().isEmpty();
        ok->setEnabled(!blank);
        ok->setToolTip(blank ? QMessageBox::tr("Type something first: it is required.") : QString());
    };
    follow(initial);
    QObject::connect(edit, &QLineEdit::textChanged, ok, follow);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(question);
    layout->addWidget(edit);
    layout->addWidget(buttons);
    if (dialog.exec() != QDialog::Accepted || edit->text().trimmed().isEmpty())
        return std::nullopt;
    return edit->text().trimmed();
}

void MessageBox::setNextText(std::optional<QString> text)
{
    s_nextTexts.append(std::move(text));
}

void MessageBox::setWhileAsking(std::function<void()> meanwhile)
{
    s_whileAsking = std::move(meanwhile);
}

void MessageBox::setNextAnswer(QMessageBox::StandardButton answer)
{
    s_nextAnswer = answer;
}

void MessageBox::setAutoAnswer(std::optional<QMessageBox::StandardButton> answer)
{
    s_autoAnswer = answer;
}

QString MessageBox::lastText()
{
    return s_lastText;
}

} // namespace OpsDeck
