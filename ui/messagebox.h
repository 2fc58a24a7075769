// Modal questions and notices with an injectable answer, so tests never block on a dialog.
#pragma once

#include <QMessageBox>
#include <QString>

#include <functional>
#include <optional>

namespace OpsDeck {

class MessageBox final
{
public:
    static QMessageBox::StandardButton question(QWidget *parent, const QString &title, const QString &text,
                                                QMessageBox::StandardButtons buttons
                                                = QMessageBox::Yes | QMessageBox::No,
                                                QMessageBox::StandardButton defaultButton = QMessageBox::No);
    static void warning(QWidget *parent, const QString &title, const QString &text);
    static void information(QWidget *parent, const QString &title, const QString &text);
    // An information that shows a secret once, with a button that copies the secret alone (the
    // text may wrap it across lines where it has a '/').
    static void secret(QWidget *parent, const QString &title, const QString &text, const QString &secret);
    // Asks for one line of text (a reason, a URL): OK only once some is typed; the text without
    // the spaces around it, or nullopt when cancelled.
    static std::optional<QString> getText(QWidget *parent, const QString &title, const QString &label,
                                          const QString &initial = {});

    // The next dialog returns this answer at once instead of showing itself (tests only).
    static void setNextAnswer(QMessageBox::StandardButton answer);
    // Every later dialog answers this way until cleared with std::nullopt (tests only).
    static void setAutoAnswer(std::optional<QMessageBox::StandardButton> answer);
    // The next getText() returns this at once (nullopt = cancelled) instead of asking (tests only);
    // answers set one after another are given in that order.
    static void setNextText(std::optional<QString> text);
    // Runs once in the next getText() answered that way, before it returns: what happens while
    // the dialog is open (tests only).
    static void setWhileAsking(std::function<void()> meanwhile);
    // The text of the last dialog that was answered automatically, for assertions.
    static QString lastText();

private:
    static std::optional<QMessageBox::StandardButton> takeAnswer(const QString &text);
    static void notice(QMessageBox::Icon icon, QWidget *parent, const QString &title, const QString &text);
};

} // namespace OpsDeck
