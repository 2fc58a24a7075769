// The console's dialogs: a secret shown once can be copied whole, and copying keeps it shown.
#include "ui/messagebox.h"

#include <QApplication>
#include <QClipboard>
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

QTEST_MAIN(tst_MessageBox)
#include "tst_messagebox.moc"
