// Modal questions and notices with an injectable answer.
#include "messagebox.h"

namespace OpsDeck {

namespace {

std::optional<QMessageBox::StandardButton> s_nextAnswer;
std::optional<QMessageBox::StandardButton> s_autoAnswer;
QString s_lastText;

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
    QMessageBox::warning(parent, title, text);
}

void MessageBox::information(QWidget *parent, const QString &title, const QString &text)
{
    if (takeAnswer(text))
        return;
    QMessageBox::information(parent, title, text);
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
