<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr" sourcelanguage="en">
<context>
    <name>OpsDeck::ApiClient</name>
    <message>
        <source>The server did not answer in time</source>
        <translation>Le serveur n&apos;a pas répondu à temps</translation>
    </message>
    <message>
        <source>%1 %2: no answer after %3 s</source>
        <translation>%1 %2&#xa0;: pas de réponse après %3&#xa0;s</translation>
    </message>
    <message>
        <source>The server&apos;s certificate was not trusted</source>
        <translation>Le certificat du serveur n&apos;a pas été approuvé</translation>
    </message>
    <message>
        <source>The server could not be reached</source>
        <translation>Le serveur est injoignable</translation>
    </message>
    <message>
        <source>The server&apos;s answer is not valid JSON</source>
        <translation>La réponse du serveur n&apos;est pas du JSON valide</translation>
    </message>
</context>
<context>
    <name>OpsDeck::AttemptLogView</name>
    <message>
        <source>%1: %2</source>
        <translation>%1&#xa0;: %2</translation>
    </message>
    <message>
        <source>Delivery attempts</source>
        <translation>Tentatives de livraison</translation>
    </message>
    <message>
        <source>Attempts</source>
        <translation>Tentatives</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>At</source>
        <translation>Date</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Statut</translation>
    </message>
    <message>
        <source>Latency</source>
        <translation>Latence</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>Erreur</translation>
    </message>
    <message>
        <source>Request</source>
        <translation>Requête</translation>
    </message>
    <message>
        <source>Request of the chosen attempt</source>
        <translation>Requête de la tentative choisie</translation>
    </message>
    <message>
        <source>Response</source>
        <translation>Réponse</translation>
    </message>
    <message>
        <source>Response of the chosen attempt</source>
        <translation>Réponse de la tentative choisie</translation>
    </message>
    <message>
        <source>no answer</source>
        <translation>pas de réponse</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1&#xa0;ms</translation>
    </message>
    <message>
        <source>—</source>
        <translation>—</translation>
    </message>
    <message>
        <source>No attempt yet.</source>
        <translation>Aucune tentative pour l&apos;instant.</translation>
    </message>
    <message>
        <source>
… (only the first 4 KiB of the response are kept)</source>
        <translation>
… (seuls les 4&#xa0;premiers Kio de la réponse sont conservés)</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>inconnu</translation>
    </message>
    <message>
        <source>(headers not recorded)</source>
        <translation>(en-têtes non enregistrés)</translation>
    </message>
    <message>
        <source>Outcome unknown: the request may have reached the endpoint
%1</source>
        <translation>Issue inconnue&#xa0;: la requête a pu atteindre le point de terminaison
%1</translation>
    </message>
    <message>
        <source>&lt; 1 ms</source>
        <translation>&lt; 1&#xa0;ms</translation>
    </message>
    <message>
        <source>HTTP %1 after %2</source>
        <translation>HTTP %1 après %2</translation>
    </message>
    <message>
        <source>No response
%1</source>
        <translation>Pas de réponse
%1</translation>
    </message>
    <message>
        <source>No response after %1
%2</source>
        <translation>Pas de réponse après %1
%2</translation>
    </message>
</context>
<context>
    <name>OpsDeck::BulkRetryDialog</name>
    <message>
        <source>&amp;Failed</source>
        <translation>Éc&amp;houés</translation>
    </message>
    <message>
        <source>&amp;Cancelled</source>
        <translation>A&amp;nnulés</translation>
    </message>
    <message>
        <source>&amp;Pending (attempt now)</source>
        <translation>&amp;En attente (tenter maintenant)</translation>
    </message>
    <message>
        <source>Retry callbacks</source>
        <translation>Relancer des rappels</translation>
    </message>
    <message>
        <source>Scope</source>
        <translation>Portée</translation>
    </message>
    <message>
        <source>Endpoint %1</source>
        <translation>Point de terminaison %1</translation>
    </message>
    <message>
        <source>Every endpoint of provider %1</source>
        <translation>Tous les points de terminaison du fournisseur %1</translation>
    </message>
    <message>
        <source>Every endpoint</source>
        <translation>Tous les points de terminaison</translation>
    </message>
    <message>
        <source>Callbacks that match</source>
        <translation>Rappels correspondants</translation>
    </message>
    <message>
        <source>Retry failure</source>
        <translation>Échec de la relance</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Motif</translation>
    </message>
    <message>
        <source>Why? The reason is kept in the audit log.</source>
        <translation>Pourquoi&#xa0;? Le motif est conservé dans le journal d&apos;audit.</translation>
    </message>
    <message>
        <source>States:</source>
        <translation>États&#xa0;:</translation>
    </message>
    <message>
        <source>Sc&amp;ope:</source>
        <translation>&amp;Portée&#xa0;:</translation>
    </message>
    <message>
        <source>Matching:</source>
        <translation>Concernés&#xa0;:</translation>
    </message>
    <message>
        <source>Re&amp;ason:</source>
        <translation>&amp;Motif&#xa0;:</translation>
    </message>
    <message>
        <source>Choose at least one state.</source>
        <translation>Choisissez au moins un état.</translation>
    </message>
    <message>
        <source>Not connected.</source>
        <translation>Non connecté.</translation>
    </message>
    <message>
        <source>Counting…</source>
        <translation>Comptage…</translation>
    </message>
    <message>
        <source>The count failed: %1</source>
        <translation>Le comptage a échoué&#xa0;: %1</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>No callback matches: there is nothing to retry.</source>
        <translation>Aucun rappel ne correspond&#xa0;: il n&apos;y a rien à relancer.</translation>
    </message>
    <message numerus="yes">
        <source>%n callback(s)</source>
        <translation>
            <numerusform>%n rappel</numerusform>
            <numerusform>%n rappels</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>Held by a paused or disabled endpoint: %1, sent once it is resumed.</source>
        <translation>Retenus par un point de terminaison suspendu ou désactivé&#xa0;: %1, envoyés dès sa reprise.</translation>
    </message>
    <message>
        <source>Retrying…</source>
        <translation>Relance…</translation>
    </message>
    <message>
        <source>Nothing was retried: %1</source>
        <translation>Rien n&apos;a été relancé&#xa0;: %1</translation>
    </message>
    <message numerus="yes">
        <source>Retry %n callback(s)</source>
        <translation>
            <numerusform>Relancer %n rappel</numerusform>
            <numerusform>Relancer %n rappels</numerusform>
        </translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>Relancer</translation>
    </message>
    <message>
        <source>Retry the callbacks in state: %1</source>
        <translation>Relancer les rappels à l&apos;état&#xa0;: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n failed</source>
        <comment>callbacks in state FAILED</comment>
        <translation>
            <numerusform>%n échoué</numerusform>
            <numerusform>%n échoués</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n cancelled</source>
        <comment>callbacks in state CANCELLED</comment>
        <translation>
            <numerusform>%n annulé</numerusform>
            <numerusform>%n annulés</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n pending</source>
        <comment>callbacks in state PENDING</comment>
        <translation>
            <numerusform>%n en attente</numerusform>
            <numerusform>%n en attente</numerusform>
        </translation>
    </message>
    <message>
        <source>Every callback in the chosen states and scope starts a fresh schedule; pending ones are attempted now. The count below follows your choice.</source>
        <translation>Chaque rappel des états et de la portée choisis repart sur un nouveau calendrier&#xa0;; ceux en attente sont retentés immédiatement. Le décompte ci-dessous suit votre choix.</translation>
    </message>
</context>
<context>
    <name>OpsDeck::CacheWorker</name>
    <message>
        <source>the cache file could not be checked (%1)</source>
        <translation>le fichier de cache n&apos;a pas pu être vérifié (%1)</translation>
    </message>
    <message>
        <source>the cache file is damaged (%1)</source>
        <translation>le fichier de cache est endommagé (%1)</translation>
    </message>
    <message>
        <source>the cache file could not be read (%1)</source>
        <translation>le fichier de cache n&apos;a pas pu être lu (%1)</translation>
    </message>
    <message>
        <source>the cache file has no schema version</source>
        <translation>le fichier de cache n&apos;a pas de version de schéma</translation>
    </message>
    <message>
        <source>the cache file has schema version %1, this console uses %2</source>
        <translation>le fichier de cache a la version de schéma %1, cette console utilise la %2</translation>
    </message>
</context>
<context>
    <name>OpsDeck::ConnectionDialog</name>
    <message>
        <source>Connect to a server</source>
        <translation>Se connecter à un serveur</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>Profil</translation>
    </message>
    <message>
        <source>Server URL</source>
        <translation>URL du serveur</translation>
    </message>
    <message>
        <source>Token</source>
        <translation>Jeton</translation>
    </message>
    <message>
        <source>Bearer token (made with: opsdeck-server token create)</source>
        <translation>Jeton Bearer (créé avec&#xa0;: opsdeck-server token create)</translation>
    </message>
    <message>
        <source>Token file</source>
        <translation>Fichier du jeton</translation>
    </message>
    <message>
        <source>Only needed when no system keychain is available</source>
        <translation>Nécessaire seulement si aucun trousseau système n&apos;est disponible</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>Parcourir…</translation>
    </message>
    <message>
        <source>&amp;Profile:</source>
        <translation>&amp;Profil&#xa0;:</translation>
    </message>
    <message>
        <source>Server &amp;URL:</source>
        <translation>&amp;URL du serveur&#xa0;:</translation>
    </message>
    <message>
        <source>&amp;Token:</source>
        <translation>&amp;Jeton&#xa0;:</translation>
    </message>
    <message>
        <source>Token &amp;file:</source>
        <translation>&amp;Fichier du jeton&#xa0;:</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>Se connecter</translation>
    </message>
    <message>
        <source>Looking for the token in the system keychain…</source>
        <translation>Recherche du jeton dans le trousseau système…</translation>
    </message>
    <message>
        <source>The token is kept in the system keychain.</source>
        <translation>Le jeton est conservé dans le trousseau système.</translation>
    </message>
    <message>
        <source>%1. The token cannot be kept in a keychain on this system: give a token file instead (it is created readable by you only).</source>
        <translation>%1. Le jeton ne peut pas être conservé dans un trousseau sur ce système&#xa0;: indiquez plutôt un fichier de jeton (il est créé lisible par vous seul).</translation>
    </message>
    <message>
        <source>Give the profile a name and a server URL such as https://opsdeck.example.org.</source>
        <translation>Donnez au profil un nom et une URL de serveur, par exemple https://opsdeck.example.org.</translation>
    </message>
    <message>
        <source>No keychain is available: give a token file to keep the token in.</source>
        <translation>Aucun trousseau n&apos;est disponible&#xa0;: indiquez un fichier où conserver le jeton.</translation>
    </message>
</context>
<context>
    <name>OpsDeck::ConnectionStatus</name>
    <message>
        <source>Connecting…</source>
        <translation>Connexion…</translation>
    </message>
    <message>
        <source>Connecting… (data as of %1)</source>
        <extracomment>%1: the time of the last contact, which the rows shown date from</extracomment>
        <translation>Connexion… (données datant de %1)</translation>
    </message>
    <message>
        <source>Connecting… (cached data as of %1)</source>
        <extracomment>%1: the time the cached rows shown were written</extracomment>
        <translation>Connexion… (données en cache datant de %1)</translation>
    </message>
    <message>
        <source>Reconnecting in %1 s…</source>
        <extracomment>%1: whole seconds to the next attempt</extracomment>
        <translation>Reconnexion dans %1&#xa0;s…</translation>
    </message>
    <message>
        <source>Reconnecting in %2 s… (data as of %1)</source>
        <extracomment>%1: the time of the last contact, which the rows shown date from; %2: whole seconds to the next attempt</extracomment>
        <translation>Reconnexion dans %2&#xa0;s… (données datant de %1)</translation>
    </message>
    <message>
        <source>Reconnecting in %2 s… (cached data as of %1)</source>
        <extracomment>%1: the time the cached rows shown were written; %2: whole seconds to the next attempt</extracomment>
        <translation>Reconnexion dans %2&#xa0;s… (données en cache datant de %1)</translation>
    </message>
    <message>
        <source>Reconnecting…</source>
        <translation>Reconnexion…</translation>
    </message>
    <message>
        <source>Reconnecting… (data as of %1)</source>
        <extracomment>%1: the time of the last contact, which the rows shown date from</extracomment>
        <translation>Reconnexion… (données datant de %1)</translation>
    </message>
    <message>
        <source>Reconnecting… (cached data as of %1)</source>
        <extracomment>%1: the time the cached rows shown were written</extracomment>
        <translation>Reconnexion… (données en cache datant de %1)</translation>
    </message>
    <message>
        <source>Offline, retrying in %1 s</source>
        <extracomment>%1: whole seconds to the next attempt</extracomment>
        <translation>Hors ligne, nouvel essai dans %1&#xa0;s</translation>
    </message>
    <message>
        <source>Offline (data as of %1), retrying in %2 s</source>
        <extracomment>%1: the time of the last contact, which the rows shown date from; %2: whole seconds to the next attempt</extracomment>
        <translation>Hors ligne (données datant de %1), nouvel essai dans %2&#xa0;s</translation>
    </message>
    <message>
        <source>Offline (cached data as of %1), retrying in %2 s</source>
        <extracomment>%1: the time the cached rows shown were written; %2: whole seconds to the next attempt</extracomment>
        <translation>Hors ligne (données en cache datant de %1), nouvel essai dans %2&#xa0;s</translation>
    </message>
    <message>
        <source>Offline, retrying…</source>
        <translation>Hors ligne, nouvel essai…</translation>
    </message>
    <message>
        <source>Offline (data as of %1), retrying…</source>
        <extracomment>%1: the time of the last contact, which the rows shown date from</extracomment>
        <translation>Hors ligne (données datant de %1), nouvel essai…</translation>
    </message>
    <message>
        <source>Offline (cached data as of %1), retrying…</source>
        <extracomment>%1: the time the cached rows shown were written</extracomment>
        <translation>Hors ligne (données en cache datant de %1), nouvel essai…</translation>
    </message>
    <message>
        <source>Offline</source>
        <translation>Hors ligne</translation>
    </message>
    <message>
        <source>Offline (data as of %1)</source>
        <extracomment>%1: the time of the last contact, which the rows shown date from</extracomment>
        <translation>Hors ligne (données datant de %1)</translation>
    </message>
    <message>
        <source>Offline (cached data as of %1)</source>
        <extracomment>%1: the time the cached rows shown were written</extracomment>
        <translation>Hors ligne (données en cache datant de %1)</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <extracomment>%1: a date, %2: a time of day</extracomment>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>Live</source>
        <translation>En direct</translation>
    </message>
</context>
<context>
    <name>OpsDeck::CredentialStore</name>
    <message>
        <source>Cannot read the token file %1: %2</source>
        <translation>Impossible de lire le fichier de jeton %1&#xa0;: %2</translation>
    </message>
    <message>
        <source>The token file %1 is empty</source>
        <translation>Le fichier de jeton %1 est vide</translation>
    </message>
    <message>
        <source>Cannot write the token file %1: %2</source>
        <translation>Impossible d&apos;écrire le fichier de jeton %1&#xa0;: %2</translation>
    </message>
    <message>
        <source>No token is stored for the profile %1</source>
        <translation>Aucun jeton n&apos;est enregistré pour le profil %1</translation>
    </message>
    <message>
        <source>The system keychain is not available (%1)</source>
        <translation>Le trousseau système n&apos;est pas disponible (%1)</translation>
    </message>
    <message>
        <source>No system keychain service answered</source>
        <translation>Aucun service de trousseau système n&apos;a répondu</translation>
    </message>
    <message>
        <source>This build has no system keychain support</source>
        <translation>Cette version n&apos;a pas été compilée avec la prise en charge du trousseau système</translation>
    </message>
</context>
<context>
    <name>OpsDeck::DashboardPage</name>
    <message>
        <source>Dashboard</source>
        <translation>Tableau de bord</translation>
    </message>
    <message>
        <source>%1 summary</source>
        <translation>Résumé&#xa0;: %1</translation>
    </message>
    <message>
        <source>Open %1</source>
        <translation>Ouvrir %1</translation>
    </message>
    <message>
        <source>Callback delivery</source>
        <translation>Livraison des rappels</translation>
    </message>
    <message>
        <source>Open Callbacks</source>
        <translation>Ouvrir les rappels</translation>
    </message>
    <message>
        <source>answering well</source>
        <translation>répondant bien</translation>
    </message>
    <message>
        <source>new or failing</source>
        <translation>nouveaux ou en échec</translation>
    </message>
    <message>
        <source>Attempts in flight</source>
        <translation>Tentatives en cours</translation>
    </message>
    <message>
        <source>Waiting for a slot</source>
        <translation>En attente d&apos;un créneau</translation>
    </message>
    <message>
        <source>Endpoints in use</source>
        <translation>Points de terminaison utilisés</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1, %2</translation>
    </message>
    <message>
        <source>Failing since %1: %2</source>
        <translation>En échec depuis %1&#xa0;: %2</translation>
    </message>
    <message>
        <source>Last storage error %1: %2</source>
        <translation>Dernière erreur de stockage %1&#xa0;: %2</translation>
    </message>
    <message>
        <source>As of %1</source>
        <translation>Relevé à %1</translation>
    </message>
    <message>
        <source>The server does not answer: last known as of %1</source>
        <translation>Le serveur ne répond pas&#xa0;: dernier état connu à %1</translation>
    </message>
    <message>
        <source>Show the %1 %2</source>
        <translation>Afficher les %2 à l&apos;état %1</translation>
    </message>
    <message>
        <source>Dashboard cards</source>
        <translation>Cartes du tableau de bord</translation>
    </message>
</context>
<context>
    <name>OpsDeck::DetailPane</name>
    <message>
        <source>Offline: the console is read-only until the server answers again.</source>
        <translation>Hors ligne&#xa0;: la console est en lecture seule jusqu&apos;à ce que le serveur réponde de nouveau.</translation>
    </message>
    <message>
        <source>Details of the selected object</source>
        <translation>Détails de l&apos;objet sélectionné</translation>
    </message>
    <message>
        <source>Select a row to see its details, state diagram and history.</source>
        <translation>Sélectionnez une ligne pour voir ses détails, son diagramme d&apos;états et son historique.</translation>
    </message>
    <message>
        <source>Actions</source>
        <translation>Actions</translation>
    </message>
    <message>
        <source>Views of the selected object</source>
        <translation>Vues de l&apos;objet sélectionné</translation>
    </message>
    <message>
        <source>Overview</source>
        <translation>Aperçu</translation>
    </message>
    <message>
        <source>Attempts</source>
        <translation>Tentatives</translation>
    </message>
    <message>
        <source>History</source>
        <translation>Historique</translation>
    </message>
    <message>
        <source>Object as JSON</source>
        <translation>Objet en JSON</translation>
    </message>
    <message>
        <source>JSON</source>
        <translation>JSON</translation>
    </message>
    <message>
        <source>%1 #%2</source>
        <translation>%1 #%2</translation>
    </message>
    <message>
        <source>%1 #%2 · version %3</source>
        <translation>%1 #%2 · version %3</translation>
    </message>
    <message>
        <source>Loading the history…</source>
        <translation>Chargement de l&apos;historique…</translation>
    </message>
    <message>
        <source>Loading the attempts…</source>
        <translation>Chargement des tentatives…</translation>
    </message>
    <message>
        <source>%1 (#%2)</source>
        <translation>%1 (#%2)</translation>
    </message>
    <message>
        <source>%1:</source>
        <translation>%1&#xa0;:</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>The %1 role may not %2 in state %3.</source>
        <translation>Le rôle %1 ne peut pas faire «&#xa0;%2&#xa0;» dans l&apos;état %3.</translation>
    </message>
    <message>
        <source>Not possible in state %1 (%2).</source>
        <translation>Impossible dans l&apos;état %1 (%2).</translation>
    </message>
    <message>
        <source>%1: %2 → %3</source>
        <translation>%1&#xa0;: %2 → %3</translation>
    </message>
    <message>
        <source>Send test event</source>
        <translation>Envoyer un événement de test</translation>
    </message>
    <message>
        <source>Sends an opsdeck.test callback, signed and retried like any other.</source>
        <translation>Envoie un rappel opsdeck.test, signé et relancé comme les autres.</translation>
    </message>
    <message>
        <source>A test event needs an active endpoint: resume it first.</source>
        <translation>Un événement de test demande un point de terminaison actif&#xa0;: reprenez-le d&apos;abord.</translation>
    </message>
    <message>
        <source>Rotate secret</source>
        <translation>Renouveler le secret</translation>
    </message>
    <message>
        <source>A new signing secret, shown once; the old one keeps signing for a grace period.</source>
        <translation>Un nouveau secret de signature, affiché une seule fois&#xa0;; l&apos;ancien continue de signer pendant un délai de grâce.</translation>
    </message>
    <message>
        <source>The instance is destroyed: nothing is signed for it any more.</source>
        <translation>L&apos;instance est détruite&#xa0;: plus rien n&apos;est signé pour elle.</translation>
    </message>
    <message>
        <source>No callback is registered: there is no secret to rotate.</source>
        <translation>Aucun rappel n&apos;est enregistré&#xa0;: il n&apos;y a pas de secret à renouveler.</translation>
    </message>
    <message>
        <source>Bulk retry…</source>
        <translation>Relance groupée…</translation>
    </message>
    <message>
        <source>Choose states and an endpoint or provider, see how many callbacks that is, then retry them together.</source>
        <translation>Choisissez des états et un point de terminaison ou un fournisseur, voyez combien de rappels cela représente, puis relancez-les ensemble.</translation>
    </message>
    <message>
        <source>The %1 role may not do this.</source>
        <translation>Le rôle %1 ne peut pas faire cela.</translation>
    </message>
    <message>
        <source>(new)</source>
        <translation>(nouveau)</translation>
    </message>
    <message>
        <source>%1   %2
%3%4</source>
        <translation>%1   %2
%3%4</translation>
    </message>
    <message>
        <source> — “%1”</source>
        <translation> — «&#xa0;%1&#xa0;»</translation>
    </message>
    <message>
        <source>No recorded changes yet.</source>
        <translation>Aucun changement enregistré pour l&apos;instant.</translation>
    </message>
    <message>
        <source>No changes recorded that the %1 role may see.</source>
        <translation>Aucun changement enregistré que le rôle %1 puisse voir.</translation>
    </message>
    <message>
        <source>No attempt was made.</source>
        <translation>Aucune tentative n&apos;a été faite.</translation>
    </message>
    <message>
        <source>No attempt yet; the first is due %1.</source>
        <translation>Aucune tentative pour l&apos;instant&#xa0;; la première est prévue le %1.</translation>
    </message>
    <message>
        <source>The attempts could not be loaded: %1</source>
        <translation>Les tentatives n&apos;ont pas pu être chargées&#xa0;: %1</translation>
    </message>
    <message>
        <source>The history could not be loaded: %1</source>
        <translation>L&apos;historique n&apos;a pas pu être chargé&#xa0;: %1</translation>
    </message>
    <message>
        <source>now</source>
        <translation>maintenant</translation>
    </message>
    <message>
        <source>in %1 s</source>
        <translation>dans %1&#xa0;s</translation>
    </message>
    <message>
        <source>in %1 min %2 s</source>
        <translation>dans %1&#xa0;min %2&#xa0;s</translation>
    </message>
    <message>
        <source>in %1 h %2 min</source>
        <translation>dans %1&#xa0;h %2&#xa0;min</translation>
    </message>
    <message>
        <source>in %1 d %2 h</source>
        <translation>dans %1&#xa0;j %2&#xa0;h</translation>
    </message>
    <message>
        <source>—</source>
        <translation>—</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>oui</translation>
    </message>
    <message>
        <source>no</source>
        <translation>non</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1&#xa0;: %2</translation>
    </message>
    <message>
        <source>Fields</source>
        <translation>Champs</translation>
    </message>
    <message>
        <source>Lifecycle</source>
        <translation>Cycle de vie</translation>
    </message>
    <message>
        <source>Offline: no action until the server answers again</source>
        <translation>Hors ligne&#xa0;: aucune action avant que le serveur réponde de nouveau</translation>
    </message>
    <message>
        <source>Highlighted: what the %1 role may do now</source>
        <translation>En surbrillance&#xa0;: ce que le rôle %1 peut faire maintenant</translation>
    </message>
    <message>
        <source>%1 Its attempts are on the Attempts tab.</source>
        <translation>%1 Ses tentatives sont dans l&apos;onglet Tentatives.</translation>
    </message>
</context>
<context>
    <name>OpsDeck::MainWindow</name>
    <message>
        <source>OpsDeck console</source>
        <translation>Console OpsDeck</translation>
    </message>
    <message>
        <source>Views</source>
        <translation>Vues</translation>
    </message>
    <message>
        <source>Dashboard</source>
        <translation>Tableau de bord</translation>
    </message>
    <message>
        <source>Organizations</source>
        <translation>Organisations</translation>
    </message>
    <message>
        <source>Instances</source>
        <translation>Instances</translation>
    </message>
    <message>
        <source>Sandboxes</source>
        <translation>Bacs à sable</translation>
    </message>
    <message>
        <source>Bindings</source>
        <translation>Liaisons</translation>
    </message>
    <message>
        <source>Catalog</source>
        <translation>Catalogue</translation>
    </message>
    <message>
        <source>Callbacks</source>
        <translation>Rappels</translation>
    </message>
    <message>
        <source>Audit</source>
        <translation>Audit</translation>
    </message>
    <message>
        <source>%1 view</source>
        <translation>Vue %1</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;Fichier</translation>
    </message>
    <message>
        <source>&amp;Connect to…</source>
        <translation>Se &amp;connecter à…</translation>
    </message>
    <message>
        <source>&amp;Export view as CSV…</source>
        <translation>&amp;Exporter la vue en CSV…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Quitter</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;Affichage</translation>
    </message>
    <message>
        <source>&amp;Filter…</source>
        <translation>&amp;Filtrer…</translation>
    </message>
    <message>
        <source>&amp;Refresh</source>
        <translation>&amp;Actualiser</translation>
    </message>
    <message>
        <source>&amp;Actions</source>
        <translation>A&amp;ctions</translation>
    </message>
    <message>
        <source>Select a row to act on it</source>
        <translation>Sélectionnez une ligne pour agir dessus</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>Ai&amp;de</translation>
    </message>
    <message>
        <source>&amp;About OpsDeck</source>
        <translation>À &amp;propos d&apos;OpsDeck</translation>
    </message>
    <message>
        <source>About OpsDeck</source>
        <translation>À propos d&apos;OpsDeck</translation>
    </message>
    <message>
        <source>OpsDeck %1 — lifecycle control plane and operator console.</source>
        <translation>OpsDeck %1 — plan de contrôle du cycle de vie et console d&apos;exploitation.</translation>
    </message>
    <message>
        <source>Main</source>
        <translation>Barre principale</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>Exporter</translation>
    </message>
    <message>
        <source>Choose a table view to export.</source>
        <translation>Choisissez une vue en tableau à exporter.</translation>
    </message>
    <message>
        <source>Export %1 as CSV</source>
        <translation>Exporter %1 en CSV</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>Fichiers CSV (*.csv)</translation>
    </message>
    <message>
        <source>Export failed</source>
        <translation>Échec de l&apos;exportation</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>Impossible d&apos;écrire %1&#xa0;: %2</translation>
    </message>
    <message>
        <source>Exported %1</source>
        <translation>Exporté vers %1</translation>
    </message>
    <message>
        <source>Disabled: its URL answered 410 Gone, which says it is gone for good. Enable it once the provider answers there again: another 410 disables it again.</source>
        <translation>Désactivé&#xa0;: son URL a répondu 410 Gone, ce qui signifie qu&apos;elle a disparu pour de bon. Activez-le quand le fournisseur y répondra de nouveau&#xa0;: un autre 410 le désactivera encore.</translation>
    </message>
    <message>
        <source>Awaiting the provider&apos;s acknowledgement: %1. It is destroyed once callback #%2 is acknowledged; if it failed, retry it on the Callbacks page.</source>
        <translation>En attente de l&apos;acquittement du fournisseur&#xa0;: %1. Elle sera détruite dès que le rappel #%2 aura été acquitté&#xa0;; s&apos;il a échoué, relancez-le sur la page Rappels.</translation>
    </message>
    <message>
        <source>Held: its endpoint #%1 is PAUSED. Nothing is sent to it until it is resumed; its waiting callbacks then go at once.</source>
        <translation>Retenue&#xa0;: son point de terminaison #%1 est à l&apos;état PAUSED. Rien ne lui est envoyé tant qu&apos;il n&apos;est pas repris&#xa0;; ses rappels en attente partent alors aussitôt.</translation>
    </message>
    <message>
        <source>Held: its endpoint #%1 is DISABLED. Nothing is sent to it until it is enabled again; its waiting callbacks then go at once.</source>
        <translation>Retenue&#xa0;: son point de terminaison #%1 est à l&apos;état DISABLED. Rien ne lui est envoyé tant qu&apos;il n&apos;est pas réactivé&#xa0;; ses rappels en attente partent alors aussitôt.</translation>
    </message>
    <message>
        <source>%1 #%2: the previous action on it has not been answered yet</source>
        <translation>%1 #%2&#xa0;: l&apos;action précédente sur cet objet n&apos;a pas encore reçu de réponse</translation>
    </message>
    <message>
        <source>Register #%1</source>
        <translation>Enregistrer #%1</translation>
    </message>
    <message>
        <source>Callback URL: where the provider receives this instance&apos;s notifications (https://…).
The server checks it; the signing secret is shown once, after.</source>
        <translation>URL de rappel&#xa0;: où le fournisseur reçoit les notifications de cette instance (https://…).
Le serveur la vérifie&#xa0;; le secret de signature est ensuite affiché une seule fois.</translation>
    </message>
    <message>
        <source>%1: %2 #%3</source>
        <translation>%1&#xa0;: %2 #%3</translation>
    </message>
    <message>
        <source>Send a test event to endpoint #%1</source>
        <translation>Envoyer un événement de test au point de terminaison #%1</translation>
    </message>
    <message>
        <source>Rotate the callback signing secret of instance #%1; the new secret is shown once</source>
        <translation>Renouveler le secret de signature des rappels de l&apos;instance #%1&#xa0;; le nouveau secret n&apos;est affiché qu&apos;une fois</translation>
    </message>
    <message>
        <source>Register instance #%1 with its callbacks sent to %2</source>
        <translation>Enregistrer l&apos;instance #%1, ses rappels étant envoyés à %2</translation>
    </message>
    <message>
        <source>%1 (stays %2)</source>
        <translation>%1 (reste %2)</translation>
    </message>
    <message>
        <source>%1, %2 → %3</source>
        <translation>%1, %2 → %3</translation>
    </message>
    <message>
        <source>
Unless it is started again, it is destroyed when the server&apos;s retention period ends (its provider is told).</source>
        <translation>
À moins d&apos;être redémarrée, elle sera détruite à la fin de la période de rétention du serveur (son fournisseur en est averti).</translation>
    </message>
    <message>
        <source>Confirm: %1</source>
        <translation>Confirmer&#xa0;: %1</translation>
    </message>
    <message>
        <source>%1%2%3

Why? The reason is kept in the audit log.</source>
        <translation>%1%2%3

Pourquoi&#xa0;? Le motif est conservé dans le journal d&apos;audit.</translation>
    </message>
    <message>
        <source> (%1)</source>
        <translation> (%1)</translation>
    </message>
    <message>
        <source>%1 #%2 not sent</source>
        <translation>%1 #%2&#xa0;: non envoyé</translation>
    </message>
    <message>
        <source>#%1 changed while this dialog was open. Nothing was done: look at it again, then choose.</source>
        <translation>#%1 a changé pendant que cette boîte de dialogue était ouverte. Rien n&apos;a été fait&#xa0;: examinez-le de nouveau, puis choisissez.</translation>
    </message>
    <message>
        <source>#%1 changed while this dialog was open: it is %2 now, not %3. Nothing was done: look at it again, then choose.</source>
        <translation>#%1 a changé pendant que cette boîte de dialogue était ouverte&#xa0;: il est maintenant %2, et non %3. Rien n&apos;a été fait&#xa0;: examinez-le de nouveau, puis choisissez.</translation>
    </message>
    <message>
        <source>%1 #%2 not done</source>
        <translation>%1 #%2&#xa0;: non effectué</translation>
    </message>
    <message>
        <source>#%1 changed on the server before this action reached it. Nothing was done: look at it again (it is updated here), then choose.</source>
        <translation>#%1 a changé sur le serveur avant que cette action ne lui parvienne. Rien n&apos;a été fait&#xa0;: examinez-le de nouveau (il est mis à jour ici), puis choisissez.</translation>
    </message>
    <message>
        <source>%1 #%2 failed</source>
        <translation>%1 #%2&#xa0;: échec</translation>
    </message>
    <message>
        <source>%1

Show delivery #%2?</source>
        <translation>%1

Afficher la livraison #%2&#xa0;?</translation>
    </message>
    <message>
        <source>Delivery #%1 is not shown: clear the filter to see it</source>
        <translation>La livraison #%1 n&apos;est pas affichée&#xa0;: effacez le filtre pour la voir</translation>
    </message>
    <message>
        <source>%1 #%2: done</source>
        <translation>%1 #%2&#xa0;: effectué</translation>
    </message>
    <message>
        <source>Test event queued as delivery #%1</source>
        <translation>Événement de test mis en file d&apos;attente comme livraison #%1</translation>
    </message>
    <message>
        <source>#%1</source>
        <translation>#%1</translation>
    </message>
    <message>
        <source>#%1 (%2)</source>
        <translation>#%1 (%2)</translation>
    </message>
    <message>
        <source>%1 (#%2)</source>
        <translation>%1 (#%2)</translation>
    </message>
    <message numerus="yes">
        <source>Retried %n callback(s)</source>
        <translation>
            <numerusform>%n rappel relancé</numerusform>
            <numerusform>%n rappels relancés</numerusform>
        </translation>
    </message>
    <message>
        <source>%1; held by a paused or disabled endpoint: %2</source>
        <translation>%1&#xa0;; retenus par un point de terminaison suspendu ou désactivé&#xa0;: %2</translation>
    </message>
    <message>
        <source>%1 #%2 (%3)</source>
        <translation>%1 #%2 (%3)</translation>
    </message>
    <message numerus="yes">
        <source>and %n more</source>
        <translation>
            <numerusform>et %n autre</numerusform>
            <numerusform>et %n autres</numerusform>
        </translation>
    </message>
    <message>
        <source>%1

%2

Show them in Instances, to stop them one by one?</source>
        <translation>%1

%2

Les afficher dans Instances, pour les arrêter une par une&#xa0;?</translation>
    </message>
    <message>
        <source>The provider&apos;s receiver verifies every callback of this instance with it.</source>
        <translation>Le récepteur du fournisseur vérifie avec lui chaque rappel de cette instance.</translation>
    </message>
    <message>
        <source>The previous secret no longer signs: this instance&apos;s signature has room for one.</source>
        <translation>L&apos;ancien secret ne signe plus&#xa0;: la signature de cette instance n&apos;en admet qu&apos;un.</translation>
    </message>
    <message>
        <source>The previous secret also signs until %1.</source>
        <translation>L&apos;ancien secret signe aussi jusqu&apos;au %1.</translation>
    </message>
    <message>
        <source>New signing secret</source>
        <translation>Nouveau secret de signature</translation>
    </message>
    <message>
        <source>The new signing secret of instance #%1 (%2). It is shown only now:

%3

%4</source>
        <translation>Le nouveau secret de signature de l&apos;instance #%1 (%2). Il n&apos;est affiché que maintenant&#xa0;:

%3

%4</translation>
    </message>
    <message>
        <source>refresh requested</source>
        <translation>actualisation demandée</translation>
    </message>
    <message>
        <source>No token</source>
        <translation>Aucun jeton</translation>
    </message>
    <message>
        <source>%1. Open File › Connect to… again and give the token.</source>
        <translation>%1. Rouvrez Fichier › Se connecter à… et donnez le jeton.</translation>
    </message>
    <message>
        <source>OpsDeck</source>
        <translation>OpsDeck</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>The server refused the token: %1</source>
        <translation>Le serveur a refusé le jeton&#xa0;: %1</translation>
    </message>
    <message>
        <source>The owner role does not see callbacks or endpoints: they are for operators and the providers they are sent to.</source>
        <translation>Le rôle owner ne voit ni les rappels ni les points de terminaison&#xa0;: ils sont réservés aux opérateurs et aux fournisseurs auxquels ils sont envoyés.</translation>
    </message>
    <message>
        <source>No callbacks yet: one is queued each time a registered instance changes state.</source>
        <translation>Aucun rappel pour l&apos;instant&#xa0;: un rappel est mis en file d&apos;attente chaque fois qu&apos;une instance enregistrée change d&apos;état.</translation>
    </message>
    <message>
        <source>No endpoints yet: one appears when an instance registers its callback URL.</source>
        <translation>Aucun point de terminaison pour l&apos;instant&#xa0;: il en apparaît un quand une instance enregistre son URL de rappel.</translation>
    </message>
    <message>
        <source>Untrusted certificate</source>
        <translation>Certificat non approuvé</translation>
    </message>
    <message>
        <source>The certificate of %1 is not trusted:
%2

Connect anyway? Only do this if you know why the certificate is not trusted.</source>
        <translation>Le certificat de %1 n&apos;est pas approuvé&#xa0;:
%2

Se connecter quand même&#xa0;? Ne le faites que si vous savez pourquoi le certificat n&apos;est pas approuvé.</translation>
    </message>
    <message>
        <source>certificate accepted</source>
        <translation>certificat accepté</translation>
    </message>
    <message>
        <source>Not connected</source>
        <translation>Non connecté</translation>
    </message>
    <message>
        <source>Connection state</source>
        <translation>État de la connexion</translation>
    </message>
    <message>
        <source>Pending operations</source>
        <translation>Opérations en cours</translation>
    </message>
    <message>
        <source>Cache notice</source>
        <translation>Avis sur le cache</translation>
    </message>
    <message>
        <source>No pending operations</source>
        <translation>Aucune opération en cours</translation>
    </message>
    <message numerus="yes">
        <source>%n pending operation(s)</source>
        <translation>
            <numerusform>%n opération en cours</numerusform>
            <numerusform>%n opérations en cours</numerusform>
        </translation>
    </message>
    <message>
        <source>Connected to %1 as %2 · live</source>
        <translation>Connecté à %1 avec le rôle %2 · en direct</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>The local cache was rebuilt: %1</source>
        <translation>Le cache local a été reconstruit&#xa0;: %1</translation>
    </message>
    <message>
        <source>HTTP %1</source>
        <translation>HTTP %1</translation>
    </message>
    <message>
        <source>Stopped before its provider registered it: it has no callback, so starting it would tell no provider. Create a new instance instead.</source>
        <translation>Arrêtée avant que son fournisseur ne l&apos;enregistre&#xa0;: elle n&apos;a pas de rappel, la démarrer n&apos;avertirait donc aucun fournisseur. Créez plutôt une nouvelle instance.</translation>
    </message>
    <message>
        <source>Being destroyed: %1. Its provider may have deleted it already, so it cannot start again; it becomes DESTROYED once callback #%2 is acknowledged. If that failed, retry it on the Callbacks page.</source>
        <translation>En cours de destruction&#xa0;: %1. Son fournisseur l&apos;a peut-être déjà supprimée, elle ne peut donc pas redémarrer&#xa0;; elle passera à DESTROYED dès que le rappel #%2 aura été acquitté. S&apos;il a échoué, relancez-le sur la page Rappels.</translation>
    </message>
    <message>
        <source>A callback URL starts with https:// or http://: %1</source>
        <translation>Une URL de rappel commence par https:// ou http://&#xa0;: %1</translation>
    </message>
    <message>
        <source>This callback URL names no host: %1</source>
        <translation>Cette URL de rappel ne nomme aucun hôte&#xa0;: %1</translation>
    </message>
    <message>
        <source>Export the rows this table shows as CSV</source>
        <translation>Exporter en CSV les lignes que montre ce tableau</translation>
    </message>
    <message>
        <source>Only a table&apos;s rows can be exported: this page has no table.</source>
        <translation>Seules les lignes d&apos;un tableau peuvent être exportées&#xa0;: cette page n&apos;a pas de tableau.</translation>
    </message>
    <message>
        <source>held</source>
        <translation>retenue</translation>
    </message>
    <message>
        <source>%1 (embedded server)</source>
        <translation>%1 (serveur intégré)</translation>
    </message>
    <message>
        <source>%1 #%2: no answer</source>
        <translation>%1 #%2&#xa0;: pas de réponse</translation>
    </message>
    <message>
        <source>%1

Whether it was done is not known. Once the console is back online it shows #%2 as the server has it: look at it then, and choose again if need be.</source>
        <translation>%1

On ne sait pas si c&apos;est fait. Une fois la console de nouveau en ligne, elle montre #%2 tel que le serveur le connaît&#xa0;: regardez-le alors, et choisissez de nouveau s&apos;il le faut.</translation>
    </message>
    <message>
        <source>%1

Nothing was done: the request never reached the server. Try again once the console is back online.</source>
        <translation>%1

Rien n&apos;a été fait&#xa0;: la demande n&apos;a jamais atteint le serveur. Réessayez une fois la console de nouveau en ligne.</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1&#xa0;: %2</translation>
    </message>
</context>
<context>
    <name>OpsDeck::Query</name>
    <message>
        <source>unterminated quote</source>
        <translation>guillemet non fermé</translation>
    </message>
    <message>
        <source>unknown field &apos;%1&apos; (known: %2)</source>
        <translation>champ inconnu &apos;%1&apos; (connus&#xa0;: %2)</translation>
    </message>
    <message>
        <source>%1 needs a value</source>
        <translation>%1 attend une valeur</translation>
    </message>
    <message>
        <source>%1 compares with &lt;, &lt;=, &gt; or &gt;= (e.g. %1&gt;1h)</source>
        <translation>%1 se compare avec &lt;, &lt;=, &gt; ou &gt;= (p. ex. %1&gt;1h)</translation>
    </message>
    <message>
        <source>%1 needs a duration like 1h, 30m, 2d</source>
        <translation>%1 attend une durée comme 1h, 30m, 2d</translation>
    </message>
    <message>
        <source>%1 needs a duration like 1h, 30m, 2d or a date like 2026-11-29</source>
        <translation>%1 attend une durée comme 1h, 30m, 2d ou une date comme 2026-11-29</translation>
    </message>
    <message>
        <source>%1 needs a date like 2026-11-29 (or compare: %1&gt;1h)</source>
        <translation>%1 attend une date comme 2026-11-29 (ou une comparaison&#xa0;: %1&gt;1h)</translation>
    </message>
    <message>
        <source>%1 compares with a number; a class like 5xx goes with &apos;:&apos; or &apos;=&apos;</source>
        <translation>%1 se compare à un nombre&#xa0;; une classe comme 5xx s&apos;écrit avec &apos;:&apos; ou &apos;=&apos;</translation>
    </message>
    <message>
        <source>%1 needs a number or a class like 5xx</source>
        <translation>%1 attend un nombre ou une classe comme 5xx</translation>
    </message>
    <message>
        <source>%1 needs a number</source>
        <translation>%1 attend un nombre</translation>
    </message>
    <message>
        <source>%1 compares only with &apos;:&apos;, &apos;=&apos; or &apos;!=&apos;, not &apos;%2&apos;</source>
        <translation>%1 ne se compare qu&apos;avec &apos;:&apos;, &apos;=&apos; ou &apos;!=&apos;, pas &apos;%2&apos;</translation>
    </message>
    <message>
        <source>%1 needs true or false</source>
        <translation>%1 attend true ou false</translation>
    </message>
    <message>
        <source>column %1: %2</source>
        <translation>colonne %1&#xa0;: %2</translation>
    </message>
</context>
<context>
    <name>OpsDeck::ResourceKind</name>
    <message>
        <source>Organizations</source>
        <translation>Organisations</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Nom</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Statut</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>Version</translation>
    </message>
    <message>
        <source>Created</source>
        <translation>Création</translation>
    </message>
    <message>
        <source>Updated</source>
        <translation>Mise à jour</translation>
    </message>
    <message>
        <source>Deleted</source>
        <translation>Suppression</translation>
    </message>
    <message>
        <source>Providers</source>
        <translation>Fournisseurs</translation>
    </message>
    <message>
        <source>Organization</source>
        <translation>Organisation</translation>
    </message>
    <message>
        <source>Applications</source>
        <translation>Applications</translation>
    </message>
    <message>
        <source>Instances</source>
        <translation>Instances</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>Fournisseur</translation>
    </message>
    <message>
        <source>Application</source>
        <translation>Application</translation>
    </message>
    <message>
        <source>Owner</source>
        <translation>Propriétaire</translation>
    </message>
    <message>
        <source>Status changed</source>
        <translation>Changement de statut</translation>
    </message>
    <message>
        <source>Callback URL</source>
        <translation>URL de rappel</translation>
    </message>
    <message>
        <source>Signing</source>
        <translation>Signature</translation>
    </message>
    <message>
        <source>Awaiting acknowledgement</source>
        <translation>En attente d&apos;acquittement</translation>
    </message>
    <message>
        <source>Awaited delivery</source>
        <translation>Livraison attendue</translation>
    </message>
    <message>
        <source>Destroy after</source>
        <translation>Destruction après</translation>
    </message>
    <message>
        <source>Callbacks</source>
        <translation>Rappels</translation>
    </message>
    <message>
        <source>Event</source>
        <translation>Événement</translation>
    </message>
    <message>
        <source>State</source>
        <translation>État</translation>
    </message>
    <message>
        <source>Last status</source>
        <translation>Dernier statut</translation>
    </message>
    <message>
        <source>Last error</source>
        <translation>Dernière erreur</translation>
    </message>
    <message>
        <source>Instance</source>
        <translation>Instance</translation>
    </message>
    <message>
        <source>Endpoint</source>
        <translation>Point de terminaison</translation>
    </message>
    <message>
        <source>Attempts</source>
        <translation>Tentatives</translation>
    </message>
    <message>
        <source>Next attempt</source>
        <translation>Prochaine tentative</translation>
    </message>
    <message>
        <source>Gives up</source>
        <translation>Abandon prévu</translation>
    </message>
    <message>
        <source>Body</source>
        <translation>Corps</translation>
    </message>
    <message>
        <source>Endpoints</source>
        <translation>Points de terminaison</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <source>Consecutive failures</source>
        <translation>Échecs consécutifs</translation>
    </message>
    <message>
        <source>Last success</source>
        <translation>Dernier succès</translation>
    </message>
    <message>
        <source>Failure rate</source>
        <translation>Taux d&apos;échec</translation>
    </message>
    <message>
        <source>Failing since</source>
        <translation>En échec depuis</translation>
    </message>
    <message>
        <source>Last failure</source>
        <translation>Dernier échec</translation>
    </message>
    <message>
        <source>Last silent</source>
        <translation>Dernier silence</translation>
    </message>
    <message>
        <source>Silences</source>
        <translation>Silences</translation>
    </message>
    <message>
        <source>Successes</source>
        <translation>Succès</translation>
    </message>
    <message>
        <source>Failures</source>
        <translation>Échecs</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>Suspension</translation>
    </message>
    <message>
        <source>Audit</source>
        <translation>Audit</translation>
    </message>
    <message>
        <source>At</source>
        <translation>Date</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>Rôle</translation>
    </message>
    <message>
        <source>Actor</source>
        <translation>Acteur</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>Action</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>Type</translation>
    </message>
    <message>
        <source>Object</source>
        <translation>Objet</translation>
    </message>
    <message>
        <source>From</source>
        <translation>De</translation>
    </message>
    <message>
        <source>To</source>
        <translation>Vers</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Motif</translation>
    </message>
    <message>
        <source>%1 %</source>
        <translation>%1&#xa0;%</translation>
    </message>
    <message>
        <source>Audit entry</source>
        <translation>Entrée d&apos;audit</translation>
    </message>
    <message>
        <source>Callback delivery</source>
        <translation>Livraison de rappel</translation>
    </message>
    <message>
        <source>Awaited notification</source>
        <translation>Notification attendue</translation>
    </message>
    <message>
        <source>ID</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Webhook ID</source>
        <translation>ID de webhook</translation>
    </message>
</context>
<context>
    <name>OpsDeck::ResourceModel</name>
    <message>
        <source>yes</source>
        <translation>oui</translation>
    </message>
    <message>
        <source>no</source>
        <translation>non</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <comment>a state read out with its note: pending, held</comment>
        <translation>%1, %2</translation>
    </message>
</context>
<context>
    <name>OpsDeck::ResourceView</name>
    <message>
        <source>%1 view</source>
        <translation>Vue %1</translation>
    </message>
    <message>
        <source>Filter %1</source>
        <translation>Filtrer %1</translation>
    </message>
    <message>
        <source>Filter: words, or field:value with %1…</source>
        <translation>Filtre&#xa0;: mots, ou champ:valeur avec %1…</translation>
    </message>
    <message>
        <source>Filter: state:%1 -state:%2 age&gt;1h words…</source>
        <translation>Filtre&#xa0;: state:%1 -state:%2 age&gt;1h mots…</translation>
    </message>
    <message>
        <source>Fields: %1. Operators: field:value, field=value, -field:value, field&gt;N, field:5xx (500 to 599), age&gt;1h (s, m, h, d, w). Quote &quot;several words&quot;.</source>
        <translation>Champs&#xa0;: %1. Opérateurs&#xa0;: champ:valeur, champ=valeur, -champ:valeur, champ&gt;N, champ:5xx (500 à 599), age&gt;1h (s, m, h, d, w). Guillemets autour de &quot;plusieurs mots&quot;.</translation>
    </message>
    <message>
        <source>Fields: %1. Operators: field:value, field=value, -field:value, field&gt;N, age&gt;1h (s, m, h, d, w). Quote &quot;several words&quot;.</source>
        <translation>Champs&#xa0;: %1. Opérateurs&#xa0;: champ:valeur, champ=valeur, -champ:valeur, champ&gt;N, age&gt;1h (s, m, h, d, w). Guillemets autour de &quot;plusieurs mots&quot;.</translation>
    </message>
    <message>
        <source>Filtering…</source>
        <translation>Filtrage…</translation>
    </message>
    <message>
        <source>Filtering in progress</source>
        <translation>Filtrage en cours</translation>
    </message>
    <message>
        <source>Query error</source>
        <translation>Erreur de requête</translation>
    </message>
    <message>
        <source>%1 table</source>
        <translation>Tableau %1</translation>
    </message>
    <message>
        <source>Copy id</source>
        <translation>Copier l&apos;ID</translation>
    </message>
    <message>
        <source>Copy as JSON</source>
        <translation>Copier en JSON</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>%1 (by the last valid filter)</source>
        <translation>%1 (selon le dernier filtre valide)</translation>
    </message>
    <message numerus="yes">
        <source>%n row(s)</source>
        <translation>
            <numerusform>%n ligne</numerusform>
            <numerusform>%n lignes</numerusform>
        </translation>
    </message>
    <message>
        <source>Nothing here yet.</source>
        <translation>Rien ici pour l&apos;instant.</translation>
    </message>
    <message>
        <source>No row matches the filter.</source>
        <translation>Aucune ligne ne correspond au filtre.</translation>
    </message>
    <message>
        <source>No state begins with %1 (the states: %2).</source>
        <translation>Aucun état ne commence par %1 (les états&#xa0;: %2).</translation>
    </message>
    <message>
        <source>Export view as CSV…</source>
        <translation>Exporter la vue en CSV…</translation>
    </message>
    <message>
        <source>Export %1 as CSV</source>
        <translation>Exporter %1 en CSV</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>Fichiers CSV (*.csv)</translation>
    </message>
    <message>
        <source>Export failed</source>
        <translation>Échec de l&apos;exportation</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>Impossible d&apos;écrire %1&#xa0;: %2</translation>
    </message>
    <message>
        <source>Reset columns</source>
        <translation>Réinitialiser les colonnes</translation>
    </message>
</context>
<context>
    <name>OpsDeck::Roles</name>
    <message>
        <source>operator</source>
        <translation>opérateur</translation>
    </message>
    <message>
        <source>provider</source>
        <translation>fournisseur</translation>
    </message>
    <message>
        <source>owner</source>
        <translation>propriétaire</translation>
    </message>
    <message>
        <source>controller</source>
        <translation>contrôleur</translation>
    </message>
    <message>
        <source>system</source>
        <translation>système</translation>
    </message>
</context>
<context>
    <name>OpsDeck::ServerHost</name>
    <message>
        <source>The embedded server could not create a session token</source>
        <translation>Le serveur intégré n&apos;a pas pu créer de jeton de session</translation>
    </message>
    <message>
        <source>The demo data could not be seeded: %1</source>
        <translation>Les données de démonstration n&apos;ont pas pu être créées&#xa0;: %1</translation>
    </message>
</context>
<context>
    <name>OpsDeck::StateBadgeLabel</name>
    <message>
        <source>%1: %2</source>
        <translation>%1&#xa0;: %2</translation>
    </message>
    <message>
        <source>State</source>
        <translation>État</translation>
    </message>
</context>
<context>
    <name>OpsDeck::StateDiagramWidget</name>
    <message>
        <source>State diagram</source>
        <translation>Diagramme d&apos;états</translation>
    </message>
    <message>
        <source>%1 (to %2)</source>
        <translation>%1 (vers %2)</translation>
    </message>
    <message>
        <source>Current state %1; no transition allowed for the %2 role</source>
        <translation>État actuel %1&#xa0;; aucune transition permise au rôle %2</translation>
    </message>
    <message>
        <source>Current state %1; allowed for the %2 role: %3</source>
        <translation>État actuel %1&#xa0;; permis au rôle %2&#xa0;: %3</translation>
    </message>
    <message>
        <source>This kind has no state machine</source>
        <translation>Ce type n&apos;a pas de machine à états</translation>
    </message>
</context>
<context>
    <name>OpsDeck::StateMachine</name>
    <message>
        <source>Delivered</source>
        <translation>Livrée</translation>
    </message>
    <message>
        <source>Delivered (in flight when cancelled)</source>
        <translation>Livrée (envoi en cours lors de l&apos;annulation)</translation>
    </message>
    <message>
        <source>Give up</source>
        <translation>Abandonner</translation>
    </message>
    <message>
        <source>Supersede</source>
        <translation>Remplacer</translation>
    </message>
    <message>
        <source>Retry now</source>
        <translation>Relancer maintenant</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>Relancer</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Annuler</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>Suspendre</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>Reprendre</translation>
    </message>
    <message>
        <source>Disable</source>
        <translation>Désactiver</translation>
    </message>
    <message>
        <source>Enable</source>
        <translation>Activer</translation>
    </message>
    <message>
        <source>Register</source>
        <translation>Enregistrer</translation>
    </message>
    <message>
        <source>Register as stopped</source>
        <translation>Enregistrer comme arrêtée</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Arrêter</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>Démarrer</translation>
    </message>
    <message>
        <source>Destroy</source>
        <translation>Détruire</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>Supprimer</translation>
    </message>
    <message>
        <source>Restore</source>
        <translation>Restaurer</translation>
    </message>
    <message>
        <source>Delivered (in flight when superseded)</source>
        <translation>Livrée (envoi en cours lors du remplacement)</translation>
    </message>
</context>
<context>
    <name>OpsDeck::StateName</name>
    <message>
        <source>active</source>
        <translation>actif</translation>
    </message>
    <message>
        <source>available</source>
        <translation>disponible</translation>
    </message>
    <message>
        <source>broken</source>
        <translation>en panne</translation>
    </message>
    <message>
        <source>building</source>
        <translation>en construction</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>annulé</translation>
    </message>
    <message>
        <source>creating</source>
        <translation>en création</translation>
    </message>
    <message>
        <source>deleted</source>
        <translation>supprimé</translation>
    </message>
    <message>
        <source>deleting</source>
        <translation>en suppression</translation>
    </message>
    <message>
        <source>delivered</source>
        <translation>livré</translation>
    </message>
    <message>
        <source>deprovisioning</source>
        <translation>en déprovisionnement</translation>
    </message>
    <message>
        <source>destroyed</source>
        <translation>détruit</translation>
    </message>
    <message>
        <source>disabled</source>
        <translation>désactivé</translation>
    </message>
    <message>
        <source>error</source>
        <translation>erreur</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>en échec</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>inactif</translation>
    </message>
    <message>
        <source>in progress</source>
        <translation>en cours</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>en pause</translation>
    </message>
    <message>
        <source>pending</source>
        <translation>en attente</translation>
    </message>
    <message>
        <source>provisioning</source>
        <translation>en provisionnement</translation>
    </message>
    <message>
        <source>purged</source>
        <translation>purgé</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>en file d&apos;attente</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>prêt</translation>
    </message>
    <message>
        <source>running</source>
        <translation>en marche</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>en démarrage</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>arrêté</translation>
    </message>
    <message>
        <source>stopping</source>
        <translation>en arrêt</translation>
    </message>
    <message>
        <source>succeeded</source>
        <translation>réussi</translation>
    </message>
    <message>
        <source>superseded</source>
        <translation>remplacé</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>inconnu</translation>
    </message>
    <message>
        <source>updating</source>
        <translation>en mise à jour</translation>
    </message>
    <message>
        <source>, </source>
        <translation>, </translation>
    </message>
</context>
<context>
    <name>OpsDeck::SyncEngine</name>
    <message>
        <source>no answer</source>
        <translation>pas de réponse</translation>
    </message>
    <message>
        <source>the server no longer holds the changes since our last visit</source>
        <translation>le serveur ne conserve plus les changements survenus depuis notre dernière visite</translation>
    </message>
    <message>
        <source>Not signed in</source>
        <translation>Non authentifié</translation>
    </message>
    <message>
        <source>the server refused the token for the change feed</source>
        <translation>le serveur a refusé le jeton pour le flux de changements</translation>
    </message>
</context>
<context>
    <name>OpsDeck::UnavailablePage</name>
    <message>
        <source>%1 view</source>
        <translation>Vue %1</translation>
    </message>
    <message>
        <source>%1: not available on this server yet</source>
        <translation>%1&#xa0;: pas encore disponible sur ce serveur</translation>
    </message>
    <message>
        <source>This server does not offer the %1 view yet. It appears here as soon as a server version that offers it is connected; nothing needs to be configured in the console.</source>
        <translation>Ce serveur ne propose pas encore la vue «&#xa0;%1&#xa0;». Elle apparaîtra ici dès qu&apos;une version du serveur qui la propose sera connectée&#xa0;; rien n&apos;est à configurer dans la console.</translation>
    </message>
</context>
<context>
    <name>QMessageBox</name>
    <message>
        <source>&amp;Copy secret</source>
        <translation>&amp;Copier le secret</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Copié</translation>
    </message>
    <message>
        <source>Type something first: it is required.</source>
        <translation>Saisissez d&apos;abord un texte&#xa0;: il est obligatoire.</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>Operator console of the OpsDeck lifecycle control plane. With no server and no profile it starts an embedded server on this machine.</source>
        <translation>Console d&apos;exploitation du plan de contrôle de cycle de vie OpsDeck. Sans serveur ni profil, elle démarre un serveur intégré sur cette machine.</translation>
    </message>
    <message>
        <source>Control plane to connect to.</source>
        <translation>Plan de contrôle auquel se connecter.</translation>
    </message>
    <message>
        <source>File holding the bearer token.</source>
        <translation>Fichier contenant le jeton Bearer.</translation>
    </message>
    <message>
        <source>FILE</source>
        <translation>FICHIER</translation>
    </message>
    <message>
        <source>Saved connection profile to use.</source>
        <translation>Profil de connexion enregistré à utiliser.</translation>
    </message>
    <message>
        <source>NAME</source>
        <translation>NOM</translation>
    </message>
    <message>
        <source>Start an embedded server (default when no server or profile is given).</source>
        <translation>Démarrer un serveur intégré (par défaut quand aucun serveur ni profil n&apos;est indiqué).</translation>
    </message>
    <message>
        <source>Embedded server with live demo data.</source>
        <translation>Serveur intégré avec des données de démonstration en direct.</translation>
    </message>
    <message>
        <source>Language of the console: %1 (default: the system&apos;s).</source>
        <translation>Langue de la console&#xa0;: %1 (par défaut&#xa0;: celle du système).</translation>
    </message>
    <message>
        <source>LANGUAGE</source>
        <translation>LANGUE</translation>
    </message>
    <message>
        <source>no translation into &apos;%1&apos; (there are: %2)</source>
        <translation>aucune traduction en «&#xa0;%1&#xa0;» (disponibles&#xa0;: %2)</translation>
    </message>
    <message>
        <source>--embedded and --demo cannot be combined with --server or --profile</source>
        <translation>--embedded et --demo ne se combinent pas avec --server ou --profile</translation>
    </message>
    <message>
        <source>no connection profile named &apos;%1&apos;</source>
        <translation>aucun profil de connexion nommé «&#xa0;%1&#xa0;»</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a server URL</source>
        <translation>«&#xa0;%1&#xa0;» n&apos;est pas une URL de serveur</translation>
    </message>
    <message>
        <source>Starting the embedded server with demo data…</source>
        <translation>Démarrage du serveur intégré avec les données de démonstration…</translation>
    </message>
    <message>
        <source>Starting the embedded server…</source>
        <translation>Démarrage du serveur intégré…</translation>
    </message>
    <message>
        <source>The embedded server did not start: %1</source>
        <translation>Le serveur intégré n&apos;a pas démarré&#xa0;: %1</translation>
    </message>
    <message>
        <source>Reading the token from the system keychain…</source>
        <translation>Lecture du jeton dans le trousseau système…</translation>
    </message>
    <message>
        <source>No token for this server: %1. Give one with --token-file or File › Connect to….</source>
        <translation>Aucun jeton pour ce serveur&#xa0;: %1. Indiquez-en un avec --token-file ou Fichier › Se connecter à….</translation>
    </message>
</context>
</TS>
