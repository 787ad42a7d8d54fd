"""``AgentSessionAdmin``: the conversation list, transcript, actions and deletion."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import model_ngettext, unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import router
from django.db.models import QuerySet, Subquery
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from django_agent_sessions import retention, transfer
from django_agent_sessions.admin import listing, responses, transcript, transcript_find
from django_agent_sessions.admin.read_only import conversation_url
from django_agent_sessions.files.models import Attachment
from django_agent_sessions.files.serving import file_response
from django_agent_sessions.models import AgentRun, AgentSession, SessionItem
from django_agent_sessions.store import search, uploads

if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[AgentSession]
else:  # ModelAdmin is generic only in django-stubs.
    _ModelAdmin = admin.ModelAdmin


@admin.register(AgentSession)
class AgentSessionAdmin(_ModelAdmin):
    # "created" is on the change page: at 1280 px, beside the filters, the list has room
    # for these columns only.
    list_display = ("session_id", "owner", "title", "item_count", "updated_at")
    list_select_related = ("owner",)
    list_filter = (
        ("updated_at", admin.DateFieldListFilter),
        listing.OwnerFilter,
        "pinned",
        listing.ArchivedFilter,
        listing.AgentFilter,
    )
    date_hierarchy = "updated_at"
    ordering = ("-updated_at",)
    list_per_page = 50
    show_full_result_count = False
    # Facet counts are COUNTs over the whole table, one per filter choice.
    show_facets = admin.ShowFacets.NEVER
    paginator = listing.EstimatedCountPaginator
    fields = (
        *("session_id", "owner", "title", "metadata", "item_count", "created_at", "updated_at"),
        *("branched_from", "branched_at_item_id", "branch_links"),
    )
    readonly_fields = fields
    actions = ("export_json", "clear_history")
    change_form_template = "admin/django_agent_sessions/agentsession/change_form.html"
    transcript_per_page = 100

    class Media:
        css = {"all": ("django_agent_sessions/admin/transcript.css",)}

    def get_search_fields(self, request: HttpRequest) -> list[str]:
        user_model = get_user_model()
        owner_fields = {user_model.USERNAME_FIELD, user_model.get_email_field_name()}
        names = {field.name for field in user_model._meta.get_fields()}
        owner_lookups = sorted(f"owner__{name}" for name in owner_fields if name in names)
        return ["session_id", "title", *owner_lookups]

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[AgentSession], search_term: str
    ) -> tuple[QuerySet[AgentSession], bool]:
        found, duplicates = super().get_search_results(request, queryset, search_term)
        said = search.conversations_with(search_term, using=queryset.db)  # messages' text too
        return (found | queryset.filter(pk__in=said) if said else found), duplicates

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentSession]:
        # The owner is shown on every page; join it rather than fetch it per row. A
        # temporary chat is nobody's to browse: it is removed soon, unseen.
        queryset: QuerySet[AgentSession] = super().get_queryset(request).select_related("owner")
        listed: QuerySet[AgentSession] = queryset.filter(temporary=False)
        return listed

    # Read-only: no adding, no editing. Viewing, clearing and deleting remain.

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_clear_history_permission(self, request: HttpRequest) -> bool:
        opts = SessionItem._meta
        return request.user.has_perm(f"{opts.app_label}.delete_{opts.model_name}")

    @admin.display(description=_("branches"))
    def branch_links(self, conversation: AgentSession) -> str:
        """The conversations branched from this one (``DjangoSession.fork``), linked."""
        links = [
            format_html('<a href="{}">{}</a>', conversation_url(branch.pk), branch)
            for branch in conversation.branches.only("pk", "title", "session_id")[:50]
        ]
        return format_html_join(", ", "{}", ((link,) for link in links)) or "-"

    # The transcript -----------------------------------------------------------------

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        response = super().change_view(request, object_id, form_url, extra_context)
        if isinstance(response, TemplateResponse) and response.context_data is not None:
            conversation = response.context_data.get("original")
            if conversation is not None:
                response.context_data["transcript"] = self._transcript(request, conversation)
                found = transcript_find.context(request, conversation, self.transcript_per_page)
                response.context_data["transcript_find"] = found
        return response

    def _transcript(self, request: HttpRequest, conversation: AgentSession) -> dict[str, Any]:
        per_page = self.transcript_per_page
        pages = max(1, math.ceil(conversation.item_count / per_page))
        try:
            number = min(max(int(request.GET.get("page", "1")), 1), pages)
        except ValueError:
            number = 1
        rows = (
            SessionItem.objects.using(conversation._state.db)
            .filter(session=conversation)
            .order_by("id")
        )
        if number > 1:
            # Find the page's first id in the (session, id) index, then read one page of
            # payloads from there: one query, whatever the page.
            first = rows.values("id")[(number - 1) * per_page :][:1]
            rows = rows.filter(id__gte=Subquery(first))
        page = list(rows.values_list("id", "created_at", "payload")[:per_page])
        names, answered = transcript.tool_calls(payload for _pk, _at, payload in page)
        if answered - names.keys():
            # Outputs whose call is on an earlier page: find those calls by call id.
            earlier = SessionItem.objects.using(conversation._state.db).filter(
                session=conversation, call_id__in=sorted(answered - names.keys())
            )
            names.update(transcript.tool_calls(earlier.values_list("payload", flat=True))[0])
        files = uploads.files_by_item(conversation.pk, page)
        entries = [
            transcript.entry(pk, at, payload, tool_names=names, files=files.get(pk, ()))
            for pk, at, payload in page
        ]
        # Runs that were stopped or failed: their unfinished reply, after their items.
        ended_early = AgentRun.objects.using(conversation._state.db).filter(
            session=conversation, status__in=[AgentRun.Status.CANCELLED, AgentRun.Status.FAILED]
        )
        if page and number > 1:
            ended_early = ended_early.filter(last_item_id__gte=page[0][0])
        if page and number < pages:
            ended_early = ended_early.filter(last_item_id__lt=page[-1][0])
        entries = transcript.with_run_notes(
            entries, list(ended_early.order_by("started_at")[:200]), last_page=number == pages
        )
        return {
            "entries": entries,
            "number": number,
            "pages": pages,
            "first_index": (number - 1) * per_page + 1,
            "previous": number > 1,
            "next": number < pages,
            "first_url": responses.page_query(request, 1),
            "previous_url": responses.page_query(request, number - 1),
            "next_url": responses.page_query(request, number + 1),
            "last_url": responses.page_query(request, pages),
        }

    def get_urls(self) -> list[URLPattern]:
        info = self.opts.app_label, self.opts.model_name
        export = path(
            "<path:object_id>/export/",
            self.admin_site.admin_view(self.export_view),
            name="{}_{}_export".format(*info),
        )
        stored_file = path(
            "<path:object_id>/files/<int:attachment_id>/",
            self.admin_site.admin_view(self.file_view),
            name="{}_{}_file".format(*info),
        )
        return [export, stored_file, *super().get_urls()]

    def file_view(self, request: HttpRequest, object_id: str, attachment_id: int) -> FileResponse:
        """A file of the conversation, for staff who may view it (the transcript's links)."""
        conversation = self.get_object(request, unquote(object_id))
        if conversation is None or not self.has_view_permission(request, conversation):
            raise PermissionDenied
        found = Attachment.objects.filter(pk=attachment_id, session=conversation).first()
        return file_response(found, request, download=request.GET.get("download") == "1")

    def export_view(self, request: HttpRequest, object_id: str) -> StreamingHttpResponse:
        """One conversation's export, linked from its change page."""
        conversation = self.get_object(request, unquote(object_id))
        if conversation is None:
            raise Http404(_("This conversation does not exist."))
        if not self.has_view_permission(request, conversation):
            raise PermissionDenied
        return self.export_json(request, self.get_queryset(request).filter(pk=conversation.pk))

    # Deleting without the collector -------------------------------------------------

    def get_deleted_objects(
        self, objs: Any, request: HttpRequest
    ) -> tuple[list[Any], dict[str, int], set[str], list[Any]]:
        if isinstance(objs, QuerySet):
            count, items = responses.totals(objs)
            shown = responses.first_named(objs)
        else:
            shown = list(objs)
            count, items = len(shown), sum(obj.item_count for obj in shown)
        listing = self._listing(shown, count)
        model_count = {
            str(AgentSession._meta.verbose_name_plural): count,
            str(SessionItem._meta.verbose_name_plural): items,
        }
        perms_needed = set()
        if not self.has_clear_history_permission(request):
            perms_needed.add(str(SessionItem._meta.verbose_name_plural))
        return listing, model_count, perms_needed, []

    def _listing(self, shown: list[AgentSession], count: int) -> list[Any]:
        listing: list[Any] = []
        for conversation in shown:
            url = conversation_url(conversation.pk)
            listing.append(
                format_html('{}: <a href="{}">{}</a>', _("Conversation"), url, conversation)
            )
        if count > len(shown):
            listing.append(_("… and %(count)d more") % {"count": count - len(shown)})
        return listing

    def delete_model(self, request: HttpRequest, obj: AgentSession) -> None:
        retention.delete_conversations(
            [obj.pk], using=router.db_for_write(AgentSession, instance=obj)
        )

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[AgentSession]) -> None:
        retention.delete_conversations(list(queryset.values_list("pk", flat=True)))

    # Actions ------------------------------------------------------------------------

    @admin.action(description=_("Export selected conversations as JSON"), permissions=["view"])
    def export_json(
        self, request: HttpRequest, queryset: QuerySet[AgentSession]
    ) -> StreamingHttpResponse:
        chunks = transfer.export_chunks(queryset, "json")
        response = StreamingHttpResponse(
            responses.streamed(request, chunks), content_type="application/json"
        )
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response["Content-Disposition"] = f'attachment; filename="conversations-{stamp}.json"'
        return response

    @admin.action(
        description=_("Clear history of selected conversations"), permissions=["clear_history"]
    )
    def clear_history(
        self, request: HttpRequest, queryset: QuerySet[AgentSession]
    ) -> TemplateResponse | None:
        if not self.has_clear_history_permission(request):
            raise PermissionDenied
        if request.POST.get("post") == "yes":
            removed = retention.clear_conversations(list(queryset.values_list("pk", flat=True)))
            self.message_user(request, responses.cleared_message(removed), messages.SUCCESS)
            return None
        count, items = responses.totals(queryset)
        shown = responses.first_named(queryset)
        context = {
            **self.admin_site.each_context(request),
            "title": _("Clear conversation history"),
            "subtitle": None,
            "opts": self.opts,
            "queryset": queryset,
            "listing": self._listing(shown, count),
            "objects_name": str(model_ngettext(self.opts, count)),
            "count": count,
            "items": items,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "selected_pks": list(queryset.values_list("pk", flat=True)),
            "media": self.media,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(
            request, "admin/django_agent_sessions/agentsession/clear_history.html", context
        )
