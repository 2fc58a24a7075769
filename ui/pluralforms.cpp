// The console's English plural forms, installed on the application.
#include "pluralforms.h"

#include <QCoreApplication>
#include <QTranslator>

namespace OpsDeck::PluralForms {

bool install()
{
    auto *app = QCoreApplication::instance();
    if (!app)
        return false;
    if (app->findChild<QTranslator *>(QStringLiteral("opsdeckPluralForms"), Qt::FindDirectChildrenOnly))
        return true;
    auto *forms = new QTranslator(app);
    forms->setObjectName(QStringLiteral("opsdeckPluralForms"));
    // qt_add_translations (ui/CMakeLists.txt) compiles translations/opsdeck_en.ts into :/i18n.
    if (!forms->load(QStringLiteral(":/i18n/opsdeck_en.qm"))) {
        delete forms;
        return false;
    }
    return QCoreApplication::installTranslator(forms);
}

} // namespace OpsDeck::PluralForms
