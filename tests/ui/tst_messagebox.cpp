// The console's dialogs: a secret shown once can be copied whole, and copying keeps it shown.
#include "ui/messagebox.h"

#include <QApplication>
#include <QClipboard>
#include <QDialog>
#include <QDialogButtonBox>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QTest>
#include <QTimer>

using namespace OpsDeck;

class tst_MessageBox : public QObject
{
    Q_OBJECT

private slots:
    void secretIsCopiedWhole();
    void textIsRequired();
};

void tst_MessageBox::secretIsCopiedWhole()
{
    MessageBox::setAutoAnswer(std::nullopt);
    const QString secret = QStringLiteral("whsec_ab/cd+ef/gh0123456789ABCDEFGHIJKLMNOPQRSTUV==");
    QApplication::clipboard()->clear();
    bool stillOpenAfterCopy = false;
    QString clipboard;
    // The dialog runs its own loop: the clicks come from a timer inside it.
    QTimer::singleShot(0, this, [&] {
        auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
        QVERIFY(box);
        auto *copy = box->findChild<QPushButton *>(QStringLiteral("copySecret"));
        QVERIFY(copy);
        QTest::mouseClick(copy, Qt::LeftButton);
        clipboard = QApplication::clipboard()->text();
        stillOpenAfterCopy = box->isVisible();
        box->accept();
    });
    MessageBox::secret(nullptr, QStringLiteral("New signing secret"), QStringLiteral("It is shown only now:\n\n") + secret, secret);
    QCOMPARE(clipboard, secret);
    QVERIFY(stillOpenAfterCopy);
}

void tst_MessageBox::textIsRequired()
{
    // A reason is kept in the audit log, a callback URL is where notifications go: OK waits for
    // some text, blanks are none, and the spaces around it are dropped.
    bool disabledEmpty = false;
    bool disabledBlank = false;
    bool enabledTyped = false;
    QTimer::singleShot(0, this, [&] {
        auto *dialog = qobject_cast<QDialog *>(QApplication::activeModalWidget());
        if (!dialog)
            return;
        auto *edit = dialog->findChild<QLineEdit *>(QStringLiteral("textAnswer"));
        auto *buttons = dialog->findChild<QDialogButtonBox *>();
        QPushButton *ok = buttons ? buttons->button(QDialogButtonBox::Ok) : nullptr;
        if (!edit || !ok) {
            dialog->reject(); // not the dialog expected: the checks below fail
            return;
        }
        disabledEmpty = !ok->isEnabled();
        QTest::keyClicks(edit, QStringLiteral("   "));
        QTest::keyClick(edit, Qt::Key_Return); // the default button is disabled: nothing happens
        disabledBlank = !ok->isEnabled() && dialog->isVisible();
        QTest::keyClicks(edit, QStringLiteral("receiver fixed  "));
        enabledTyped = ok->isEnabled();
        QTest::keyClick(edit, Qt::Key_Return);
    });
    const std::optional<QString> text = MessageBox::getText(nullptr, QStringLiteral("Confirm: Retry"), QStringLiteral("Why?"));
    QVERIFY(disabledEmpty);
    QVERIFY(disabledBlank);
    QVERIFY(enabledTyped);
    QCOMPARE(text, std::optional<QString>(QStringLiteral("receiver fixed")));

    // Cancelled: no text at all.
    QTimer::singleShot(0, this, [] {
        auto *dialog = qobject_cast<QDialog *>(QApplication::activeModalWidget());
        if (!dialog)
            return;
        if (auto *edit = dialog->findChild<QLineEdit *>())
            QTest::keyClicks(edit, QStringLiteral("never mind"));
        QTest::keyClick(dialog, Qt::Key_Escape);
    });
    QCOMPARE(MessageBox::getText(nullptr, QStringLiteral("Confirm: Retry"), QStringLiteral("Why?")), std::nullopt);
}

QTEST_MAIN(tst_MessageBox)
#include "tst_messagebox.moc"
