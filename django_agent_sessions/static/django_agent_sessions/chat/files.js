/*
 * The files of a user message in the transcript: images shown through the owner-only
 * file view (c/<id>/files/<file id>/, same origin, so a strict Content-Security-Policy
 * allows them), other files as download links with their size. Names are inserted as
 * text. The files stay on the message's article (`files`), for edit and regenerate.
 */
import { element } from "./dom.js";

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export function isImage(contentType) {
  return IMAGE_TYPES.has(contentType);
}

export function formatSize(bytes) {
  const units = ["B", "KB", "MB", "GB"];
  let size = bytes;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return (unit === 0 ? String(size) : size.toFixed(size < 10 ? 1 : 0)) + " " + units[unit];
}

/* The URL of file `id`, from the page's URL of file 0 (Django's reverse() of the view). */
export function fileUrl(template, id) {
  return template.replace(/\/0\/$/, "/" + encodeURIComponent(id) + "/");
}

export class MessageFiles {
  constructor(template, strings) {
    this.template = template;
    this.strings = strings;
  }

  url(id) {
    return fileUrl(this.template, id);
  }

  /* Show `files` on a message's article, above its actions. */
  show(article, files) {
    if (!files || !files.length) return;
    article.files = files;
    const list = element("ul", "message-files");
    list.setAttribute("aria-label", this.strings.files);
    files.forEach((file) => list.appendChild(this.entry(file)));
    article.insertBefore(list, article.querySelector(".message-actions"));
  }

  entry(file) {
    const item = element("li", "message-file");
    const link = element("a");
    const name = file.name || (isImage(file.content_type) ? this.strings.image : this.strings.file);
    if (isImage(file.content_type)) {
      link.href = this.url(file.id);
      link.target = "_blank";
      link.rel = "noopener";
      const image = element("img");
      image.src = link.href;
      image.alt = name;
      image.loading = "lazy";
      link.appendChild(image);
    } else {
      link.href = this.url(file.id) + "?download=1";
      link.download = file.name || "";
      link.textContent = name;
      item.appendChild(element("span", "file-size", formatSize(file.size)));
    }
    item.prepend(link);
    return item;
  }
}
